//! Small typed handles into the trace's tables.
//!
//! Each handle stores `index + 1` in a [`NonZeroU32`], so `Option<Handle>`
//! is as small as the handle itself and no sentinel value exists. Handles of
//! different tables are different types: an [`EventId`] cannot be used where
//! a [`StrId`] is expected.

use std::fmt;
use std::num::NonZeroU32;

/// The largest index a handle can hold.
pub const MAX_INDEX: usize = (u32::MAX - 1) as usize;

macro_rules! handle {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(NonZeroU32);

        impl $name {
            /// The handle of table row 0.
            pub const FIRST: Self = $name(NonZeroU32::MIN);

            /// The handle of table row `index`.
            ///
            /// Panics when `index` exceeds [`MAX_INDEX`]; the builder refuses
            /// traces that large with an error before that can happen.
            #[inline]
            pub fn new(index: usize) -> Self {
                assert!(index <= MAX_INDEX, "handle index {index} out of range");
                // index + 1 is in 1..=u32::MAX, never zero.
                $name(NonZeroU32::new(index as u32 + 1).expect("index + 1 is non-zero"))
            }

            /// The row this handle names.
            #[inline]
            pub fn index(self) -> usize {
                (self.0.get() - 1) as usize
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.index())
            }
        }
    };
}

handle!(
    /// An event of the arena. For a full load its index is the event's
    /// position in the input, which is the reference's `UID`.
    EventId
);
handle!(
    /// An interned string.
    StrId
);
handle!(
    /// An interned `pid` / `tid` value.
    IdentId
);
handle!(
    /// An event's argument record.
    ArgsId
);
handle!(
    /// An interned, parsed argument value.
    ValueId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_round_trips_and_option_is_free() {
        assert_eq!(EventId::new(0).index(), 0);
        assert_eq!(EventId::new(MAX_INDEX).index(), MAX_INDEX);
        assert_eq!(std::mem::size_of::<Option<EventId>>(), 4);
        assert_eq!(std::mem::size_of::<Option<ValueId>>(), 4);
        assert!(EventId::new(1) < EventId::new(2));
        assert_eq!(format!("{:?}", StrId::new(7)), "StrId(7)");
    }

    #[test]
    #[should_panic]
    fn too_large_panics() {
        EventId::new(MAX_INDEX + 1);
    }
}
