//! maple-mm (being written)
