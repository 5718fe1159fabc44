//! End-to-end: `callbench load` of a gRPC method without `--proto` asks the server's reflection,
//! and a hostile reflection server (ours, speaking raw HTTP/2 frames on 127.0.0.1) cannot make
//! it decode millions of files or read past one resolution's byte budget: the run fails with one
//! line, well within the reflection's time limit, and its peak memory stays small.

use crate::common::{self, h2_frames::*, hostile::Conn, hostile::Hostile, Run};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `load`'s reflection time limit (crates/load/src/build.rs), and a little to start and exit.
const TIME_BOUND: Duration = Duration::from_secs(10 + 3);
/// Far below what decoding the hostile answers would take (gigabytes without the bounds).
const MEMORY_BOUND_KIB: u64 = 128 * 1024;

/// The largest frame a client accepts without saying more (RFC 9113 §4.2).
const MAX_FRAME: usize = 16_384;

/// A length-delimited protobuf field (wire type 2).
fn field(number: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![number << 3 | 2];
    let mut n = content.len();
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
    out.extend_from_slice(content);
    out
}

/// A `ServerReflectionResponse` carrying `files` (encoded `FileDescriptorProto`s) as one answer.
fn answer(files: &[u8]) -> Vec<u8> {
    field(4, files)
}

/// Serves reflection: every request message on a stream gets `answer(k)`, k counting the
/// requests of the connection, as one gRPC message on a 200 `application/grpc` answer.
fn reflection_server(answer: impl Fn(usize) -> Vec<u8> + Send + Sync + 'static) -> Hostile {
    let answer = std::sync::Arc::new(answer);
    Hostile::start(move |mut conn: Conn| {
        if conn.read_exact_bytes(PREFACE_LEN).is_none() || !conn.write(&frame(SETTINGS, 0, 0, &[])) {
            return;
        }
        let (mut requests, mut data, mut answering) = (0, Vec::new(), None);
        while let Some(head) = conn.read_exact_bytes(9) {
            let len = (usize::from(head[0]) << 16) | (usize::from(head[1]) << 8) | usize::from(head[2]);
            let (kind, flags) = (head[3], head[4]);
            let stream = u32::from_be_bytes(head[5..9].try_into().unwrap()) & 0x7fff_ffff;
            let Some(payload) = conn.read_exact_bytes(len) else { return };
            match kind {
                SETTINGS if flags & ACK == 0 && !conn.write(&frame(SETTINGS, ACK, 0, &[])) => return,
                DATA if stream > 0 => data.extend_from_slice(&payload),
                _ => {}
            }
            // Each whole gRPC message in the request's data is one request.
            while data.len() >= 5 {
                let length = u32::from_be_bytes(data[1..5].try_into().unwrap()) as usize;
                if data.len() < 5 + length {
                    break;
                }
                data.drain(..5 + length);
                if answering != Some(stream) {
                    let head = [&[0x88u8][..], &[0, 12], b"content-type", &[16], b"application/grpc"].concat();
                    if !conn.write(&frame(HEADERS, END_HEADERS, stream, &head)) {
                        return;
                    }
                    answering = Some(stream);
                }
                let message = answer(requests);
                requests += 1;
                let framed = [&[0u8][..], &(message.len() as u32).to_be_bytes(), &message].concat();
                for piece in framed.chunks(MAX_FRAME) {
                    if !conn.write(&frame(DATA, 0, stream, piece)) {
                        return;
                    }
                }
            }
        }
    })
}

/// `callbench load ARGS` run to its end, and the peak RSS wait4 gives for it (KiB). That counts
/// the test process's pages at the start too, so it is an upper bound of the CLI's own.
fn load_with_peak(args: &[&str]) -> (Run, u64) {
    let start = Instant::now();
    #[allow(clippy::zombie_processes)] // reaped by wait4 below, which gives its rusage too
    let mut child = Command::new(common::callbench())
        .arg("load")
        .args(args)
        .current_dir(common::repo())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start callbench");
    let read = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let (out, err) = (read(Box::new(child.stdout.take().unwrap())), read(Box::new(child.stderr.take().unwrap())));
    let pid = child.id() as libc::pid_t;
    // wait4 blocks on a thread of its own until the process ends; past the limit it is killed.
    let (tell, reaped) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
        unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        let _ = tell.send((status, usage));
    });
    let waited = reaped.recv_timeout(common::RUN_LIMIT);
    let ended = waited.is_ok();
    let (status, usage) = waited.unwrap_or_else(|_| {
        let _ = child.kill();
        reaped.recv().expect("the killed process is reaped")
    });
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let run = Run { code, stdout: out.join().unwrap(), stderr: err.join().unwrap(), elapsed: start.elapsed() };
    assert!(ended, "still running after {:?}:\n{}", common::RUN_LIMIT, run.all());
    common::assert_no_panic(&run);
    (run, usage.ru_maxrss as u64)
}

/// Loads a method of `server` by reflection: it must fail in one line containing `needle`,
/// within the time bound and the memory bound.
fn refused(server: &Hostile, needle: &str) {
    let target = format!("grpc://127.0.0.1:{}/hostile.Files/Get", server.port);
    let (run, peak_kib) = load_with_peak(&["-n", "1", "-d", "{}", &target]);
    assert_eq!(run.code, Some(1), "{}", run.all());
    common::assert_one_line(&run, needle);
    assert!(run.elapsed < TIME_BOUND, "{}", run.all());
    assert!(peak_kib < MEMORY_BOUND_KIB, "peak RSS {peak_kib} KiB:\n{}", run.all());
    eprintln!("refused in {:?}, peak RSS at most {peak_kib} KiB: {}", run.elapsed, run.stderr.trim());
}

#[test]
fn one_answer_of_two_million_files_is_refused_before_it_is_decoded() {
    // Two million empty files: 4 MB on the wire, gigabytes decoded.
    let files = field(1, &[]).repeat(2_000_000);
    let server = reflection_server(move |_| answer(&files));
    refused(&server, "reflection: the server sent over 10000 files");
}

#[test]
fn answers_past_the_byte_budget_together_are_refused() {
    // Each file imports the next and holds 1 MiB of package name (bytes that read as no message):
    // every answer alone is small, 17 of them pass one resolution's 16 MiB.
    let server = reflection_server(|k| {
        let file = [
            field(1, format!("f{k}.proto").as_bytes()),
            field(2, &vec![b'c'; 1 << 20]),
            field(3, format!("f{}.proto", k + 1).as_bytes()),
        ]
        .concat();
        answer(&field(1, &file))
    });
    refused(&server, "of the 16 MiB one resolution reads");
}
