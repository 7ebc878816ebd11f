//! What a loaded trace must contain. Passes declare it; the loader obeys,
//! leaving out what no pass reads (less parsing, less memory).

/// What the loader must keep of a trace.
///
/// A full load (the default) keeps every event, in input order, so that an
/// event's index is its UID. Events a pass does not need are then kept as
/// stubs: the UID numbering stays, nothing else of them is parsed. With
/// [`Needs::collectives_only`] only linked collective kernels are kept (at
/// all: their indices are no longer UIDs), plus the trace info.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    /// Python frames (`python_function` events), e.g. for nn.Module views.
    pub python_frames: bool,
    /// Events of categories no pass classifies (instant and memory events).
    pub other_events: bool,
    /// Only collective kernels (NCCL, RCCL, custom all-reduce) that carry a
    /// link id, with their metadata: the multi-rank collective report.
    pub collectives_only: bool,
    /// An event per rocprofv3 kernel dispatch and memory copy (what the
    /// commands that read events see); the rocprof report itself reads the
    /// dispatch records only.
    pub dispatch_events: bool,
}

impl Default for Needs {
    /// Everything.
    fn default() -> Self {
        Needs::ALL
    }
}

impl Needs {
    /// Every event in full.
    pub const ALL: Needs = Needs {
        python_frames: true,
        other_events: true,
        collectives_only: false,
        dispatch_events: true,
    };

    /// Every event, with python frames and other events as stubs.
    pub const EVENTS: Needs = Needs {
        python_frames: false,
        other_events: false,
        collectives_only: false,
        dispatch_events: true,
    };

    /// Only linked collective kernels and the trace info.
    pub const COLLECTIVES: Needs = Needs {
        python_frames: false,
        other_events: false,
        collectives_only: true,
        dispatch_events: true,
    };

    /// The needs of the multi-rank collective report.
    pub fn collectives_only() -> Needs {
        Needs::COLLECTIVES
    }

    /// What both `self` and `other` need: everything either keeps.
    pub fn union(self, other: Needs) -> Needs {
        Needs {
            python_frames: self.python_frames || other.python_frames,
            other_events: self.other_events || other.other_events,
            collectives_only: self.collectives_only && other.collectives_only,
            dispatch_events: self.dispatch_events || other.dispatch_events,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_keeps_what_either_needs() {
        assert_eq!(
            Needs::COLLECTIVES.union(Needs::COLLECTIVES),
            Needs::COLLECTIVES
        );
        assert_eq!(Needs::COLLECTIVES.union(Needs::EVENTS), Needs::EVENTS);
        let py = Needs {
            python_frames: true,
            ..Needs::EVENTS
        };
        assert_eq!(Needs::EVENTS.union(py), py);
        assert_eq!(py.union(Needs::ALL), Needs::ALL);
        let lean = Needs {
            dispatch_events: false,
            ..Needs::EVENTS
        };
        assert_eq!(lean.union(lean), lean);
        assert_eq!(lean.union(Needs::EVENTS), Needs::EVENTS);
    }
}
