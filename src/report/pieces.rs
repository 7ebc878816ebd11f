//! Big sheets rendered in pieces on every core and consumed in order: the
//! CSV writer appends the pieces' text, the Excel writer deflates the
//! pieces' XML (see [`super::xlsx`]).

use std::ops::Range;

use rayon::prelude::*;

/// Rows a piece holds so that its text comes to about `piece_bytes`, at
/// `row_bytes` a row: at least one, at most `max_rows`.
pub(crate) fn rows_per_piece(piece_bytes: usize, row_bytes: usize, max_rows: usize) -> usize {
    (piece_bytes / row_bytes.max(1)).clamp(1, max_rows.max(1))
}

/// Renders rows `0..rows` as consecutive pieces of at most `piece_rows`
/// rows each and hands every piece to `sink`, in row order, on the
/// calling thread.
///
/// Pieces are rendered on the rayon pool `wave` at a time, by a thread of
/// their own, while `sink` takes the wave before: writing a sheet's text
/// (the kernel's copy into the page cache) overlaps rendering the next
/// rows instead of leaving the cores idle. At most two waves are held:
/// the one `sink` takes and the next, waiting. Called on a thread of a
/// rayon pool (no writer is today; a sheet written by parallel workers
/// would be), the waves are rendered and taken in turn instead: that
/// thread then works on its own wave rather than blocking on another
/// thread's, which could leave the pool without a free worker. When
/// `rows` fits in one piece it is rendered on the calling thread. Stops
/// at `sink`'s first error and returns it.
pub(crate) fn render_in_pieces<T: Send, E>(
    rows: usize,
    piece_rows: usize,
    wave: usize,
    render: impl Fn(Range<usize>) -> T + Sync,
    mut sink: impl FnMut(T) -> Result<(), E>,
) -> Result<(), E> {
    let piece_rows = piece_rows.max(1);
    if rows <= piece_rows {
        return sink(render(0..rows));
    }
    let pieces = rows.div_ceil(piece_rows);
    let wave = wave.max(1);
    // The wave of pieces from piece `first`, rendered on the pool.
    let render_wave = |first: usize| -> Vec<T> {
        (first..(first + wave).min(pieces))
            .into_par_iter()
            .map(|p| render(p * piece_rows..((p + 1) * piece_rows).min(rows)))
            .collect()
    };
    let firsts = (0..pieces).step_by(wave);
    if rayon::current_thread_index().is_some() {
        return firsts.flat_map(render_wave).try_for_each(&mut sink);
    }
    let render_wave = &render_wave;
    std::thread::scope(|scope| {
        // A rendezvous: the renderer hands a wave over only once `sink`
        // has taken the one before.
        let (waves, rendered) = std::sync::mpsc::sync_channel::<Vec<T>>(0);
        let renderer = scope.spawn(move || {
            for first in firsts {
                // The receiver is gone once `sink` has failed.
                if waves.send(render_wave(first)).is_err() {
                    break;
                }
            }
        });
        let sunk = rendered.iter().flatten().try_for_each(&mut sink);
        // Stops the renderer at its next wave after an error.
        drop(rendered);
        if let Err(panic) = renderer.join() {
            std::panic::resume_unwind(panic);
        }
        sunk
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::Mutex;
    use std::thread::ThreadId;

    #[test]
    fn pieces_cover_the_rows_once_in_order() {
        for (rows, piece_rows, wave) in [(0, 4, 2), (3, 4, 2), (4, 4, 2), (23, 4, 2), (23, 5, 16)] {
            let mut seen = Vec::new();
            render_in_pieces::<_, ()>(
                rows,
                piece_rows,
                wave,
                |r| r,
                |r| {
                    assert!(r.len() <= piece_rows);
                    seen.extend(r);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(seen, (0..rows).collect::<Vec<_>>(), "{rows} rows");
        }
    }

    #[test]
    fn rows_per_piece_aims_at_the_bytes_within_bounds() {
        assert_eq!(rows_per_piece(1 << 20, 64, 16_384), 16_384);
        assert_eq!(rows_per_piece(1 << 20, 512, 16_384), 2_048);
        assert_eq!(rows_per_piece(100, 1_000, 16_384), 1);
        assert_eq!(rows_per_piece(1 << 16, 0, usize::MAX), 1 << 16);
    }

    #[test]
    fn stops_at_the_first_error() {
        let mut taken = 0;
        let rendered = std::sync::atomic::AtomicUsize::new(0);
        let result = render_in_pieces(
            1_000,
            10,
            3,
            |r| {
                rendered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                r.start
            },
            |start| {
                taken += 1;
                if start == 40 { Err(start) } else { Ok(()) }
            },
        );
        assert_eq!(result, Err(40));
        assert_eq!(taken, 5);
        // The renderer stops too: the failing wave, the one rendered
        // meanwhile and at most one more, not the 100 pieces.
        assert!(rendered.into_inner() <= 9);
    }

    /// Renders 95 rows in pieces of 10, 3 a wave, checking that every
    /// piece is taken on the calling thread; returns the rows taken, in
    /// order, and the threads that rendered them.
    fn render_recording_threads() -> (Vec<usize>, HashSet<ThreadId>) {
        let caller = std::thread::current().id();
        let renderers = Mutex::new(HashSet::new());
        let mut seen = Vec::new();
        render_in_pieces::<_, ()>(
            95,
            10,
            3,
            |r| {
                renderers
                    .lock()
                    .unwrap()
                    .insert(std::thread::current().id());
                r
            },
            |r| {
                assert_eq!(std::thread::current().id(), caller);
                seen.extend(r);
                Ok(())
            },
        )
        .unwrap();
        (seen, renderers.into_inner().unwrap())
    }

    #[test]
    fn pieces_are_taken_on_the_calling_thread_while_others_render() {
        let (seen, renderers) = render_recording_threads();
        assert_eq!(seen, (0..95).collect::<Vec<_>>());
        assert!(!renderers.contains(&std::thread::current().id()));
    }

    #[test]
    fn on_a_pool_thread_the_waves_are_rendered_and_taken_in_turn() {
        // A pool of one thread: had it blocked on a wave rendered for it
        // elsewhere, nothing would be left to render there.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let (seen, only_here) = pool.install(|| {
            let (seen, renderers) = render_recording_threads();
            (
                seen,
                renderers == HashSet::from([std::thread::current().id()]),
            )
        });
        assert_eq!(seen, (0..95).collect::<Vec<_>>());
        // Rendered by the pool's one thread, the caller itself.
        assert!(only_here, "rendered off the caller's pool");
    }

    #[test]
    #[should_panic(expected = "render failed")]
    fn a_panic_while_rendering_reaches_the_caller() {
        let _ = render_in_pieces::<_, ()>(
            100,
            10,
            2,
            |r| {
                assert!(r.start != 60, "render failed");
                r
            },
            |_| Ok(()),
        );
    }
}
