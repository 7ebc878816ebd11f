//! Standard output as the commands write it: a closed pipe (`| head`) ends
//! the output quietly and the command still succeeds, as for other Unix
//! tools; any other failed write (a full disk, `/dev/full`) is an error of
//! one line and a non-zero exit, never a panic or a silent loss.

use std::io::{ErrorKind, Write};

use anyhow::{Result, anyhow};

/// Writes `text` to standard output and flushes it.
pub(crate) fn write(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let written = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    outcome(written)
}

/// [`write`] of `text` and a newline.
pub(crate) fn write_line(text: &str) -> Result<()> {
    write(&format!("{text}\n"))
}

/// What a write's result means for the command: a closed pipe is success.
fn outcome(written: std::io::Result<()>) -> Result<()> {
    match written {
        Err(e) if e.kind() != ErrorKind::BrokenPipe => {
            Err(anyhow!("cannot write to standard output: {e}"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::outcome;
    use std::io::{Error, ErrorKind};

    #[test]
    fn a_closed_pipe_is_success_and_other_failures_are_errors() {
        assert!(outcome(Ok(())).is_ok());
        assert!(outcome(Err(Error::from(ErrorKind::BrokenPipe))).is_ok());
        let full = outcome(Err(Error::from_raw_os_error(libc::ENOSPC))).unwrap_err();
        assert!(
            full.to_string()
                .starts_with("cannot write to standard output: ")
        );
    }
}
