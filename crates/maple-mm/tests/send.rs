//! The address space and the memory handle can move between threads.

#[test]
fn address_space_is_send() {
    fn send<T: Send>() {}
    send::<maple_mm::AddressSpace>();
    send::<maple_mm::Memory>();
    fn sync<T: Sync>() {}
    sync::<maple_mm::Memory>();
    let mut mm = maple_mm::AddressSpace::new();
    let a = mm
        .mmap(
            0,
            4096,
            maple_mm::Prot::RW,
            maple_mm::MapFlags::PRIVATE_ANON,
            None,
            0,
        )
        .unwrap();
    mm.write_byte(a, 5).unwrap();
    let mut child = mm.fork().unwrap();
    let h = std::thread::spawn(move || {
        child.write_byte(a, 6).unwrap();
        child.read_byte(a).unwrap()
    });
    assert_eq!(h.join().unwrap(), 6);
    assert_eq!(mm.read_byte(a).unwrap(), 5);
    mm.validate().unwrap();
}
