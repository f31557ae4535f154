//! A container's CRI log file read for a log request, in chunks of [`CHUNK`] bytes, from the
//! start of the tail it asks for; followed across the runtime's replacing the file when
//! rotated. Blocking: callers run it on a blocking thread.
//!
//! Entry point: [`LogFile::open`]. The tail's start is found by reading the file backwards in
//! chunks, so its cost is the tail's size and the memory one chunk, whatever the file's size
//! or its lines' lengths.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use sergeant_host::filesystem::{identity_of, read_at, read_exact_at};

use super::cri_log::{line_head, Renderer, MAX_HEAD};

/// How much of the file is read at a time: the memory a log request holds.
pub const CHUNK: usize = 64 * 1024;

/// An open log file and where the next read starts.
#[derive(Debug)]
pub struct LogFile {
    path: PathBuf,
    file: File,
    offset: u64,
    buffer: Vec<u8>,
}

impl LogFile {
    /// Opens the log at `path`, at the start of its last `tail` lines (all of it for none).
    ///
    /// # Errors
    /// Why the file cannot be opened or read.
    pub fn open(path: &Path, tail: Option<u64>) -> io::Result<Self> {
        let file = File::open(path)?;
        let mut buffer = vec![0; CHUNK];
        let offset = match tail {
            Some(lines) => tail_start(&file, file.metadata()?.len(), lines, &mut buffer)?,
            None => 0,
        };
        Ok(Self {
            path: path.to_owned(),
            file,
            offset,
            buffer,
        })
    }

    /// Reads the next chunk into `renderer`, appending what it renders to `out`: the bytes
    /// read, 0 at the end of the file.
    ///
    /// # Errors
    /// Why the file cannot be read.
    pub fn read(&mut self, renderer: &mut Renderer, out: &mut Vec<u8>) -> io::Result<usize> {
        let read = read_at(&self.file, &mut self.buffer, self.offset)?;
        renderer.feed(&self.buffer[..read], out);
        self.offset = self
            .offset
            .saturating_add(u64::try_from(read).unwrap_or(u64::MAX));
        Ok(read)
    }

    /// At the end of a followed log: when the runtime has put a new file at the path
    /// (rotation) or cut this one short, goes on at the start of the new one, telling
    /// `renderer`. Whether it did.
    ///
    /// # Errors
    /// Why the path cannot be examined or the new file opened.
    pub fn follow_rotation(&mut self, renderer: &mut Renderer) -> io::Result<bool> {
        let open = self.file.metadata()?;
        let now = match std::fs::metadata(&self.path) {
            Ok(now) => now,
            // Between the rename and the new file: nothing new yet.
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        };
        if identity_of(&now) != identity_of(&open) {
            self.file = File::open(&self.path)?;
        } else if open.len() >= self.offset {
            return Ok(false);
        }
        self.offset = 0;
        renderer.restart();
        Ok(true)
    }
}

/// Where the last `lines` lines of `file` (`len` bytes long) start: just after the end of the
/// line before them, counting the lines the container wrote (a line the runtime split in
/// pieces is one; lines that are not CRI are not counted). Reads backwards from the end a
/// chunk at a time into `buffer`.
fn tail_start(file: &File, len: u64, lines: u64, buffer: &mut Vec<u8>) -> io::Result<u64> {
    if lines == 0 {
        return Ok(len);
    }
    let mut counted = 0;
    let mut seen_a_line = false;
    // The end of the file's line being looked at: where the line after it starts.
    let mut line_end = len;
    let mut chunk_end = len;
    // The first bytes of the chunk after this one, where the head of a line that starts at the
    // end of this chunk goes on.
    let mut ahead: Vec<u8> = Vec::new();
    loop {
        let chunk_start = chunk_end.saturating_sub(CHUNK as u64);
        let size = usize::try_from(chunk_end - chunk_start).unwrap_or(CHUNK);
        buffer.resize(size, 0);
        read_exact_at(file, buffer, chunk_start)?;
        buffer.extend_from_slice(&ahead);
        let breaks = buffer[..size]
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i + 1);
        let starts = breaks.chain((chunk_start == 0).then_some(0));
        for start in starts {
            let at = chunk_start + start as u64;
            if at >= line_end {
                continue;
            }
            if let Some(head) = line_head(&buffer[start..]) {
                if head.partial {
                    // A split line at the very end counts as one.
                    counted += u64::from(!seen_a_line);
                } else if counted == lines {
                    return Ok(line_end);
                } else {
                    counted += 1;
                }
                seen_a_line = true;
            }
            line_end = at;
        }
        if chunk_start == 0 {
            return Ok(0);
        }
        ahead = buffer[..size.min(MAX_HEAD + 1)].to_vec();
        chunk_end = chunk_start;
    }
}

#[cfg(test)]
mod tests {
    use super::super::log_query::LogQuery;
    use super::*;

    /// Lines of the container, `n` of them, some split in two pieces by the runtime, some
    /// padded long, with garbage between.
    fn log(n: usize) -> Vec<u8> {
        let mut text = Vec::new();
        for i in 0..n {
            let time = format!("2026-01-01T00:00:{:02}.{i:09}Z", i % 60);
            if i % 3 == 0 {
                text.extend(format!("{time} stdout P piece of {i}, \n").bytes());
            }
            let pad = if i % 7 == 0 {
                "x".repeat(70_000)
            } else {
                String::new()
            };
            text.extend(format!("{time} stdout F line {i}{pad}\n").bytes());
            if i % 5 == 0 {
                text.extend_from_slice(b"not a CRI line\n");
            }
        }
        text
    }

    fn rendered_tail(text: &[u8], tail: Option<u64>) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.log");
        std::fs::write(&path, text).unwrap();
        let mut file = LogFile::open(&path, tail).unwrap();
        let mut renderer = Renderer::new(&LogQuery::default());
        let mut out = Vec::new();
        while file.read(&mut renderer, &mut out).unwrap() > 0 {}
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_tail_is_the_last_lines_of_the_whole_render() {
        let text = log(40);
        let whole = rendered_tail(&text, None);
        let all: Vec<&str> = whole.split_inclusive('\n').collect();
        assert_eq!(all.len(), 40);
        for tail in [0, 1, 2, 3, 7, 39, 40, 41, u64::MAX] {
            let kept = all
                .len()
                .saturating_sub(usize::try_from(tail).unwrap_or(usize::MAX));
            assert_eq!(
                rendered_tail(&text, Some(tail)),
                all[kept..].concat(),
                "tail {tail}"
            );
        }
    }

    #[test]
    fn a_split_line_at_the_end_counts_as_one() {
        let text = b"2026-01-01T00:00:01Z stdout F one\n\
                     2026-01-01T00:00:02Z stdout F two\n\
                     2026-01-01T00:00:03Z stdout P thr";
        assert_eq!(rendered_tail(text, Some(1)), "thr");
        assert_eq!(rendered_tail(text, Some(2)), "two\nthr");
        assert_eq!(rendered_tail(b"", Some(3)), "");
    }

    #[test]
    fn a_rotated_log_is_followed_into_the_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.log");
        std::fs::write(&path, "2026-01-01T00:00:01Z stdout F old\n").unwrap();
        let mut file = LogFile::open(&path, None).unwrap();
        let mut renderer = Renderer::new(&LogQuery::default());
        let mut out = Vec::new();
        while file.read(&mut renderer, &mut out).unwrap() > 0 {}
        assert!(!file.follow_rotation(&mut renderer).unwrap());
        std::fs::rename(&path, dir.path().join("0.log.1")).unwrap();
        assert!(
            !file.follow_rotation(&mut renderer).unwrap(),
            "no new file yet"
        );
        std::fs::write(&path, "2026-01-01T00:00:02Z stdout F new\n").unwrap();
        assert!(file.follow_rotation(&mut renderer).unwrap());
        while file.read(&mut renderer, &mut out).unwrap() > 0 {}
        assert_eq!(out, b"old\nnew\n");
        std::fs::write(&path, "").unwrap();
        assert!(file.follow_rotation(&mut renderer).unwrap(), "cut short");
    }
}
