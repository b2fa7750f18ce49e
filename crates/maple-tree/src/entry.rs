//! The entry API: look up the range holding an index once, then read,
//! change, split or remove it (or fill the gap) without walking again
//! (`BTreeMap::entry`, on a [`CursorMut`]).

use crate::cursor::CursorMut;
use crate::tree::{bounds, MapleTree};
use core::fmt;
use core::ops::{RangeBounds, RangeInclusive};

fn into_absent<V>(_: &V, _: RangeInclusive<u64>) -> V {
    unreachable!("maple tree: a store into a gap cut an entry")
}

impl<V> MapleTree<V> {
    /// The range holding `index`, for changing it in place: an
    /// [`Entry::Occupied`] when an entry holds `index`, an [`Entry::Vacant`]
    /// (the gap around `index`) otherwise. The lookup is one walk; the
    /// entry's methods reuse it.
    ///
    /// ```
    /// use maple_tree::{Entry, MapleTree};
    ///
    /// let mut t = MapleTree::new();
    /// t.insert(0x1000..0x3000, "rw");
    /// if let Entry::Occupied(mut e) = t.entry(0x1800) {
    ///     e.split(0x2000);                 // 0x1000..=0x1fff and 0x2000..=0x2fff
    ///     *e.get_mut() = "r";              // the part holding 0x1800
    /// }
    /// assert_eq!(format!("{t:?}"), r#"{0x1000..=0x1fff: "r", 0x2000..=0x2fff: "rw"}"#);
    ///
    /// let v = t.entry(0x5000).or_insert(0x5000..0x6000, "new");
    /// assert_eq!(*v, "new");
    /// ```
    pub fn entry(&mut self, index: u64) -> Entry<'_, V> {
        let cursor = self.cursor_mut(index);
        if cursor.get().is_some() {
            Entry::Occupied(OccupiedEntry { cursor, index })
        } else {
            Entry::Vacant(VacantEntry { cursor, index })
        }
    }
}

/// The range holding an index; from [`MapleTree::entry`].
pub enum Entry<'a, V> {
    /// An entry holds the index.
    Occupied(OccupiedEntry<'a, V>),
    /// The index lies in a gap.
    Vacant(VacantEntry<'a, V>),
}

/// `Occupied(OccupiedEntry { .. })` or `Vacant(VacantEntry { .. })`.
impl<V: fmt::Debug> fmt::Debug for Entry<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entry::Occupied(e) => f.debug_tuple("Occupied").field(e).finish(),
            Entry::Vacant(e) => f.debug_tuple("Vacant").field(e).finish(),
        }
    }
}

/// The index asked for, the entry's range and its value.
impl<V: fmt::Debug> fmt::Debug for OccupiedEntry<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OccupiedEntry")
            .field("index", &self.index())
            .field("range", &self.range())
            .field("value", self.get())
            .finish()
    }
}

/// The index asked for and the gap holding it.
impl<V> fmt::Debug for VacantEntry<'_, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VacantEntry")
            .field("index", &self.index())
            .field("range", &self.range())
            .finish()
    }
}

impl<'a, V> Entry<'a, V> {
    /// The index that was looked up.
    pub fn index(&self) -> u64 {
        match self {
            Entry::Occupied(e) => e.index(),
            Entry::Vacant(e) => e.index(),
        }
    }

    /// The range holding the index: the entry's, or the gap's.
    pub fn range(&self) -> RangeInclusive<u64> {
        match self {
            Entry::Occupied(e) => e.range(),
            Entry::Vacant(e) => e.range(),
        }
    }

    /// The entry's value; if there is none, stores `value` over `range`
    /// (which must lie inside the gap) and returns it.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// *t.entry(5).or_insert(0..10, 0) += 1;
    /// *t.entry(7).or_insert(0..10, 0) += 1;
    /// assert_eq!(t.get_key_value(0), Some((0..=9, &2)));
    /// ```
    ///
    /// # Panics
    /// If the index is in a gap and `range` is empty, reversed, or not inside
    /// the gap.
    #[track_caller]
    pub fn or_insert(self, range: impl RangeBounds<u64>, value: V) -> &'a mut V {
        match self {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(range, value),
        }
    }

    /// As [`or_insert`](Self::or_insert), making the value only when needed.
    ///
    /// # Panics
    /// As [`or_insert`](Self::or_insert).
    #[track_caller]
    pub fn or_insert_with(
        self,
        range: impl RangeBounds<u64>,
        make: impl FnOnce() -> V,
    ) -> &'a mut V {
        match self {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(range, make()),
        }
    }

    /// Calls `f` on the value if there is an entry, and passes the entry on.
    ///
    /// ```
    /// let mut t = maple_tree::MapleTree::new();
    /// t.insert(0..10, 1);
    /// t.entry(3).and_modify(|v| *v += 1).or_insert(0..=0, 0);
    /// assert_eq!(t.get(3), Some(&2));
    /// ```
    pub fn and_modify(mut self, f: impl FnOnce(&mut V)) -> Self {
        if let Entry::Occupied(e) = &mut self {
            f(e.get_mut());
        }
        self
    }
}

/// An entry of the tree, found by [`MapleTree::entry`].
pub struct OccupiedEntry<'a, V> {
    cursor: CursorMut<'a, V>,
    index: u64,
}

impl<'a, V> OccupiedEntry<'a, V> {
    /// The index that was looked up.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The entry's range.
    pub fn range(&self) -> RangeInclusive<u64> {
        self.cursor.range()
    }

    /// The entry's value.
    pub fn get(&self) -> &V {
        self.cursor.get().expect("occupied entry holds a value")
    }

    /// The entry's value, mutably.
    pub fn get_mut(&mut self) -> &mut V {
        self.cursor.get_mut().expect("occupied entry holds a value")
    }

    /// The entry's value, mutably, for as long as the tree was borrowed.
    pub fn into_mut(self) -> &'a mut V {
        self.cursor
            .into_value_mut()
            .expect("occupied entry holds a value")
    }

    /// Replaces the entry's value (the range stays) and returns the old one.
    pub fn insert(&mut self, value: V) -> V {
        core::mem::replace(self.get_mut(), value)
    }

    /// Removes the entry and returns it.
    ///
    /// ```
    /// use maple_tree::{Entry, MapleTree};
    /// let mut t = MapleTree::new();
    /// t.insert(10..20, 'x');
    /// let Entry::Occupied(e) = t.entry(15) else { unreachable!() };
    /// assert_eq!(e.remove(), (10..=19, 'x'));
    /// assert!(t.is_empty());
    /// ```
    #[doc(alias = "mas_erase")]
    pub fn remove(mut self) -> (RangeInclusive<u64>, V) {
        self.cursor.remove().expect("occupied entry holds a value")
    }

    /// Cuts the entry in two at `at`: `first..=at-1` and `at..=last`, both
    /// with a clone of the value. The entry then stands for the part that
    /// holds its index.
    ///
    /// # Panics
    /// Unless `first < at <= last`.
    #[track_caller]
    pub fn split(&mut self, at: u64)
    where
        V: Clone,
    {
        self.split_with(at, |v, _| v.clone())
    }

    /// Cuts the entry in two at `at`: `first..=at-1` keeps the value, and
    /// `at..=last` gets `split(&value, at..=last)`. The entry then stands for
    /// the part that holds its index. No value is cloned or dropped.
    ///
    /// If `split` panics, the tree is left as it was.
    ///
    /// ```
    /// use maple_tree::{Entry, MapleTree};
    /// // A VMA-like value: the file offset of the range's start.
    /// let mut t = MapleTree::new();
    /// t.insert_with(0x1000..0x4000, 0u64, |_, _| unreachable!());
    /// let Entry::Occupied(mut e) = t.entry(0x3000) else { unreachable!() };
    /// e.split_with(0x2000, |off, r| off + (r.start() - 0x1000));
    /// assert_eq!(e.range(), 0x2000..=0x3fff);
    /// assert_eq!(*e.get(), 0x1000);
    /// assert_eq!(t.get_key_value(0x1000), Some((0x1000..=0x1fff, &0)));
    /// ```
    ///
    /// # Panics
    /// Unless `first < at <= last`.
    #[track_caller]
    pub fn split_with(&mut self, at: u64, split: impl FnOnce(&V, RangeInclusive<u64>) -> V) {
        let range = self.range();
        let (first, last) = (*range.start(), *range.end());
        assert!(
            first < at && at <= last,
            "maple tree: split point {at:#x} not inside the entry {first:#x}..={last:#x} (or at its start)"
        );
        // The caller's code runs before anything changes.
        let upper = split(self.get(), at..=last);
        // Moving the value to the lower part, rather than storing the upper
        // part over the entry, is what spares a clone: a store that cuts an
        // entry makes every surviving part from a reference to the old value.
        let (_, value) = self.cursor.remove().expect("occupied entry holds a value");
        self.cursor.insert_with(first..=at - 1, value, into_absent);
        self.cursor.insert_with(at..=last, upper, into_absent);
        self.cursor.seek(self.index);
    }
}

/// A gap of the tree, found by [`MapleTree::entry`].
pub struct VacantEntry<'a, V> {
    cursor: CursorMut<'a, V>,
    index: u64,
}

impl<'a, V> VacantEntry<'a, V> {
    /// The index that was looked up.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The whole gap holding the index.
    pub fn range(&self) -> RangeInclusive<u64> {
        self.cursor.range()
    }

    /// Stores `value` over `range`, which must lie inside the gap (it need
    /// not hold the index), and returns the stored value.
    ///
    /// ```
    /// use maple_tree::{Entry, MapleTree};
    /// let mut t = MapleTree::new();
    /// t.insert(0..10, 'a');
    /// t.insert(100..110, 'b');
    /// let Entry::Vacant(gap) = t.entry(50) else { unreachable!() };
    /// assert_eq!(gap.range(), 10..=99);
    /// gap.insert(10..20, 'c');
    /// assert_eq!(t.get(15), Some(&'c'));
    /// ```
    ///
    /// # Panics
    /// If `range` is empty, reversed, or not inside the gap.
    #[track_caller]
    pub fn insert(mut self, range: impl RangeBounds<u64>, value: V) -> &'a mut V {
        let (first, last) = bounds(&range);
        let gap = self.range();
        assert!(
            *gap.start() <= first && last <= *gap.end(),
            "maple tree: range {first:#x}..={last:#x} is not inside the gap {:#x}..={:#x}",
            gap.start(),
            gap.end()
        );
        self.cursor.insert_with(first..=last, value, into_absent);
        self.cursor
            .into_value_mut()
            .expect("the cursor sits on the value just stored")
    }
}
