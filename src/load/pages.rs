//! Handing the pages of an input buffer back to the system once they are
//! decoded, so that a buffer read whole (an XPlane protobuf needs random
//! access) does not stay resident beside what it was decoded into.

/// The system's page size (4 KiB when it cannot be asked).
fn page_size() -> usize {
    #[allow(unsafe_code)]
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

/// Gives the whole pages inside `bytes` back to the system (none when
/// `bytes` spans no whole page): the resident size drops at once, and the
/// bytes of those pages read as zeros afterwards. Failure is ignored: the
/// pages then just stay resident.
///
/// # Safety
///
/// `bytes` must lie in private anonymous memory owned by the caller (a
/// heap block, not a file mapping), and nothing may read those bytes after
/// this call: not through `bytes`, nor through any other reference.
#[allow(unsafe_code)]
pub unsafe fn release(bytes: &[u8]) {
    let page = page_size();
    let start = bytes.as_ptr() as usize;
    let first = start.next_multiple_of(page);
    let end = (start + bytes.len()) / page * page;
    if end > first {
        // SAFETY: [first, end) is inside `bytes`, page-aligned, and the
        // caller guarantees it is private anonymous memory no one reads.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_DONTNEED);
        }
    }
}
