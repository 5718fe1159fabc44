//! A capture of a real link (root needed, as for every link): its end waits until the forwarder
//! wrote the file out and closed it, a cap keeps the file a valid pcap no larger than the cap, and
//! a file the forwarder cannot finish in time is reported cut, never complete.

use callbench_link::pcap::{self, Reader, Written};
use callbench_link::phases;
use callbench_link::probe::ping_pong;
use callbench_link::{Link, LinkSpec};
use callbench_primitives::scratch::ScratchDir;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// A directory of the test's own, removed when dropped.
fn link() -> Link {
    Link::create(&LinkSpec::parse("rtt=0").unwrap(), &[]).unwrap_or_else(|e| panic!("{e}"))
}

/// Every packet of a file, and where it is cut.
fn packets_of(path: &Path) -> (u64, Option<u64>) {
    let mut reader = Reader::open(path).unwrap();
    let mut count = 0;
    while reader.next_packet().unwrap().is_some() {
        count += 1;
    }
    (count, reader.cut_at())
}

/// `round_trips` of a ping-pong across `link`, captured into `path` up to `cap`.
fn captured(link: &Link, path: &Path, cap: u64, round_trips: usize) -> Written {
    link.start_capture(path, pcap::DEFAULT_SNAPLEN, cap).unwrap();
    ping_pong(link, round_trips).unwrap();
    link.end_capture(pcap::FINISH_WITHIN).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_capture_ends_once_its_file_is_written_and_closed() {
    let dir = ScratchDir::new("callbench-capture-whole").unwrap();
    let path = dir.join("run.pcap");
    let link = link();
    let written = captured(&link, &path, pcap::DEFAULT_CAP, 200);
    // Read while the link still runs: what end_capture reported is all in the file already.
    assert_eq!(written.bytes, std::fs::metadata(&path).unwrap().len());
    assert_eq!((written.not_written, written.cut()), (0, None));
    assert_eq!(packets_of(&path), (written.packets, None));
    let phases = phases::read_file(&path, None).unwrap();
    assert_eq!((phases.packets as u64, phases.connections.len(), phases.cut_at_byte), (written.packets, 1, None));
}

#[test]
fn a_capture_past_its_cap_is_a_valid_pcap_of_the_packets_before() {
    let dir = ScratchDir::new("callbench-capture-cap").unwrap();
    let path = dir.join("run.pcap");
    let link = link();
    let cap = pcap::MIN_CAP * 8;
    let written = captured(&link, &path, cap, 200);
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(written.not_written > 0, "200 round trips fit in {cap} bytes? {written:?}");
    assert!(size <= cap && size == written.bytes, "{size} bytes, cap {cap}");
    assert_eq!(packets_of(&path), (written.packets, None), "whole records only");
    let line = written.cut().unwrap();
    assert!(
        line.contains(&pcap::show_cap(cap)) && line.contains(&format!("{} packets not written", written.not_written))
    );
    assert_eq!(phases::read_file(&path, None).unwrap().connections.len(), 1);
}

/// The capture goes into a pipe nobody reads yet (4 KiB of room): the forwarder's last write
/// blocks, and the end, bounded, says the file is cut. Once the pipe is read the forwarder
/// finishes, closes the file, and what came through is a whole pcap.
#[test]
fn a_capture_not_written_out_in_time_is_reported_cut() {
    let dir = ScratchDir::new("callbench-capture-stuck").unwrap();
    let path = dir.join("run.pcap");
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
    let mut pipe =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&path).expect("the pipe's reader");
    // SAFETY: fcntl on a descriptor this test owns.
    unsafe {
        assert!(libc::fcntl(pipe.as_raw_fd(), libc::F_SETPIPE_SZ, 4096) >= 4096, "F_SETPIPE_SZ");
    }
    let link = link();
    link.start_capture(&path, pcap::DEFAULT_SNAPLEN, pcap::DEFAULT_CAP).unwrap();
    ping_pong(&link, 200).unwrap();
    let within = Duration::from_millis(300);
    let started = Instant::now();
    let end = link.end_capture(within);
    assert!(started.elapsed() >= within, "it waited its bound");
    let why = end.expect_err("a capture still being written is not complete");
    assert!(matches!(why, callbench_link::LinkError::Io(_)), "{why:?}");
    assert!(why.to_string().contains("did not finish writing it within 300ms"), "{why}");
    // Read the pipe to its end: the forwarder then finishes and closes it.
    let mut file = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut buf = [0u8; 65536];
    loop {
        assert!(Instant::now() < deadline, "the forwarder never closed the capture ({} bytes read)", file.len());
        let mut fds = libc::pollfd { fd: pipe.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut fds, 1, 1000) };
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => file.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("reading the pipe: {e}"),
        }
    }
    assert!(file.len() > 4096, "more than the pipe held: {} bytes", file.len());
    let mut reader = Reader::new(&file[..]).unwrap();
    let mut count = 0;
    while reader.next_packet().unwrap().is_some() {
        count += 1;
    }
    assert!(count > 0 && reader.cut_at().is_none(), "{count} packets, cut at {:?}", reader.cut_at());
}
