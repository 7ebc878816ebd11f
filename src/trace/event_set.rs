//! [`EventSet`]: a set of events as one bit per event id, for passes that
//! mark most of a big trace's events (a hash set costs 10–20 times more
//! memory per member and a hash per lookup).

use super::EventId;

/// A set of [`EventId`]s, one bit per id below the largest member.
#[derive(Debug, Default, Clone)]
pub struct EventSet {
    words: Vec<u64>,
}

impl EventSet {
    /// An empty set with room for ids below `events` (it grows past them).
    pub fn with_capacity(events: usize) -> EventSet {
        EventSet {
            words: vec![0; events.div_ceil(64)],
        }
    }

    /// Adds `id`; true when it was not in the set.
    pub fn insert(&mut self, id: EventId) -> bool {
        let (word, bit) = (id.index() / 64, 1u64 << (id.index() % 64));
        if word >= self.words.len() {
            self.words.resize(word + 1, 0);
        }
        let new = self.words[word] & bit == 0;
        self.words[word] |= bit;
        new
    }

    /// Whether `id` is in the set.
    pub fn contains(&self, id: EventId) -> bool {
        self.words
            .get(id.index() / 64)
            .is_some_and(|w| w & (1u64 << (id.index() % 64)) != 0)
    }

    /// How many ids the set holds (counted when asked: inserts, the hot
    /// path, keep no count).
    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }
}

impl Extend<EventId> for EventSet {
    fn extend<I: IntoIterator<Item = EventId>>(&mut self, ids: I) {
        for id in ids {
            self.insert(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_counted_once_and_the_set_grows_past_its_capacity() {
        let mut s = EventSet::with_capacity(10);
        assert!(s.is_empty());
        assert!(s.insert(EventId::new(3)));
        assert!(!s.insert(EventId::new(3)));
        // Past the capacity, and across word edges.
        assert!(s.insert(EventId::new(64)));
        assert!(s.insert(EventId::new(1000)));
        s.extend([EventId::new(63), EventId::new(64)]);
        assert_eq!(s.len(), 4);
        for i in [3, 63, 64, 1000] {
            assert!(s.contains(EventId::new(i)), "{i}");
        }
        for i in [0, 2, 4, 62, 65, 999, 1001, 1_000_000] {
            assert!(!s.contains(EventId::new(i)), "{i}");
        }
    }
}
