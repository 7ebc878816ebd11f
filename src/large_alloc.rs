//! The binary's allocator for large blocks (a module of the `tracelens`
//! binary, not of the library): every block of at least [`LARGE`] bytes is
//! its own anonymous memory mapping, and everything smaller goes to the
//! allocator it wraps.
//!
//! Why: the trace's event columns, the call tree's link arrays and the
//! sheets' row vectors grow by doubling. From a heap, each growth copies the
//! whole block into fresh pages (which fault in) and leaves the old ones
//! resident until the heap hands them back. A mapping grows with `mremap`:
//! the kernel moves the page table entries, nothing is copied, and the pages
//! already touched stay the only pages touched. A freed mapping goes back to
//! the system at once, and a zeroed one costs nothing until it is written.

use std::alloc::{GlobalAlloc, Layout};
use std::ptr;

/// Blocks of at least this many bytes are mappings of their own.
pub const LARGE: usize = 1 << 20;

/// The mappings' alignment: a page (blocks that ask for more go to the inner
/// allocator).
const PAGE: usize = 4096;

/// An allocator that maps blocks of [`LARGE`] bytes or more itself and
/// passes the others to `A`. Whether a block is a mapping follows from its
/// size and alignment alone, which every `dealloc` and `realloc` is given.
pub struct LargeMapped<A>(pub A);

/// True when a block of this layout is (or becomes) a mapping.
#[inline]
fn mapped(size: usize, align: usize) -> bool {
    size >= LARGE && align <= PAGE
}

/// A fresh zeroed mapping of `size` bytes, or null.
unsafe fn map(size: usize) -> *mut u8 {
    // SAFETY: an anonymous private mapping at an address of the kernel's choice.
    let p = unsafe {
        libc::mmap(
            ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        ptr::null_mut()
    } else {
        p.cast()
    }
}

// SAFETY: mappings are page-aligned, hence meet every alignment they are
// used for (at most a page); other blocks are the inner allocator's, and a
// block's size and alignment decide which of the two it came from, the same
// way at allocation and at release.
unsafe impl<A: GlobalAlloc> GlobalAlloc for LargeMapped<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if mapped(layout.size(), layout.align()) {
            unsafe { map(layout.size()) }
        } else {
            unsafe { self.0.alloc(layout) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if mapped(layout.size(), layout.align()) {
            // Fresh anonymous pages read as zero.
            unsafe { map(layout.size()) }
        } else {
            unsafe { self.0.alloc_zeroed(layout) }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if mapped(layout.size(), layout.align()) {
            // SAFETY: `p` is a mapping of this size (see `alloc`).
            unsafe { libc::munmap(p.cast(), layout.size()) };
        } else {
            unsafe { self.0.dealloc(p, layout) }
        }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        match (mapped(layout.size(), align), mapped(new_size, align)) {
            (false, false) => unsafe { self.0.realloc(p, layout, new_size) },
            (true, true) => {
                // SAFETY: `p` is a mapping of `layout.size()` bytes; the
                // kernel moves it if it cannot grow in place.
                let q = unsafe {
                    libc::mremap(p.cast(), layout.size(), new_size, libc::MREMAP_MAYMOVE)
                };
                if q == libc::MAP_FAILED {
                    ptr::null_mut()
                } else {
                    q.cast()
                }
            }
            _ => {
                // Across the threshold: a new block of the other kind.
                // SAFETY: `new_size` is non-zero (realloc's contract) with
                // the old alignment.
                let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, align) };
                let q = unsafe { self.alloc(new_layout) };
                if !q.is_null() {
                    unsafe {
                        ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
                        self.dealloc(p, layout);
                    }
                }
                q
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::alloc::System;

    /// Writes a byte pattern over `n` bytes at `p`.
    unsafe fn fill(p: *mut u8, n: usize) {
        for i in 0..n {
            unsafe { *p.add(i) = (i % 251) as u8 };
        }
    }

    /// True when the `n` bytes at `p` still hold the pattern.
    unsafe fn holds(p: *const u8, n: usize) -> bool {
        (0..n).all(|i| unsafe { *p.add(i) } == (i % 251) as u8)
    }

    #[test]
    fn blocks_keep_their_bytes_across_the_threshold_both_ways() {
        let a = LargeMapped(System);
        let small = 1000;
        let sizes = [small, LARGE - 1, LARGE, 3 * LARGE + 5, 8 * LARGE, LARGE, 40];
        unsafe {
            let mut layout = Layout::from_size_align(small, 8).unwrap();
            let mut p = a.alloc(layout);
            assert!(!p.is_null());
            fill(p, small);
            let mut kept = small;
            for &size in &sizes[1..] {
                p = a.realloc(p, layout, size);
                assert!(!p.is_null(), "realloc to {size}");
                assert!(holds(p, kept.min(size)), "bytes lost at {size}");
                fill(p, size);
                kept = size;
                layout = Layout::from_size_align(size, 8).unwrap();
            }
            a.dealloc(p, layout);
        }
    }

    #[test]
    fn zeroed_blocks_read_zero_on_both_sides() {
        let a = LargeMapped(System);
        for size in [64, LARGE, 2 * LARGE + 1] {
            let layout = Layout::from_size_align(size, 16).unwrap();
            unsafe {
                let p = a.alloc_zeroed(layout);
                assert!(!p.is_null());
                assert!((0..size).all(|i| *p.add(i) == 0), "size {size}");
                a.dealloc(p, layout);
            }
        }
    }

    #[test]
    fn only_page_aligned_large_blocks_are_mapped() {
        assert!(!mapped(LARGE - 1, 8));
        assert!(mapped(LARGE, PAGE));
        assert!(!mapped(LARGE, 2 * PAGE));
    }
}
