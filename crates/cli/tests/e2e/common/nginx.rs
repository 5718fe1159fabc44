//! A stock nginx (Debian's, installed by scripts/setup) in the foreground on loopback ports (or
//! on an address of a network namespace the test made, run inside it):
//! HTTP/1.1, HTTP/2 with prior knowledge (h2c) and, when asked, HTTP/2 over TLS with a
//! self-signed certificate made by openssl. Its pid, logs and temp files live in its own
//! directory. Stopped with SIGTERM (the master stops its worker), then killed, worker included.

use super::{children_of, installed, Guard, TempDir};
use std::process::{Command, Stdio};
use std::time::Duration;

pub struct Nginx {
    master: Option<Guard>,
    pub h1: u16,
    pub h2: u16,
    /// HTTP/2 over TLS, when started with TLS.
    pub h2s: Option<u16>,
    pub dir: TempDir,
}

/// How the nginx is set up.
#[derive(Default)]
pub struct Options {
    /// Lines inside `http { }` (e.g. `keepalive_requests 100000;`); none keeps nginx's defaults.
    pub http: String,
    /// Also listen with TLS and ALPN h2.
    pub tls: bool,
    /// A static file `file.txt` of this text.
    pub file: String,
    /// With `tls`: certificates from a CA of the test's own (`ca.pem`; the server's names only
    /// `localhost`), and the TLS port requires a client certificate that CA signed (`client.pem`,
    /// `client.key`, made beside it).
    pub mtls: bool,
    /// Where it listens, with the namespace it runs in (`ip netns exec`); None: 127.0.0.1 here.
    pub inside: Option<(String, String)>,
}

/// Runs openssl with `args` in `dir`; panics with its output if it fails.
fn openssl(dir: &TempDir, args: &[&str]) {
    let made = Command::new("openssl").args(args).current_dir(&dir.0).output().expect("run openssl");
    assert!(made.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&made.stderr));
}

/// A CA (`ca.pem`), a server certificate for `localhost` (`cert.pem`, `key.pem`) and a client
/// certificate (`client.pem`, `client.key`), both signed by the CA.
fn make_ca_and_certificates(dir: &TempDir) {
    let key = ["-newkey", "rsa:2048", "-nodes", "-days", "1"];
    openssl(
        dir,
        &[&["req", "-x509"], &key[..], &["-subj", "/CN=callbench test CA", "-keyout", "ca.key", "-out", "ca.pem"]]
            .concat(),
    );
    for (name, subject, extensions) in [
        ("cert", "/CN=localhost", "subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n"),
        ("client", "/CN=callbench test client", "extendedKeyUsage=clientAuth\n"),
    ] {
        let key_file = if name == "cert" { "key.pem".to_string() } else { format!("{name}.key") };
        std::fs::write(dir.path(&format!("{name}.ext")), extensions).unwrap();
        openssl(
            dir,
            &[
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-subj",
                subject,
                "-keyout",
                &key_file,
                "-out",
                &format!("{name}.csr"),
            ],
        );
        let (csr, out, ext) = (format!("{name}.csr"), format!("{name}.pem"), format!("{name}.ext"));
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "1",
                "-out",
                &out,
                "-extfile",
                &ext,
            ],
        );
    }
}

impl Nginx {
    /// The master's pid (it leads the process group of its worker).
    pub fn pid(&self) -> u32 {
        self.master.as_ref().map_or(0, |m| m.id())
    }

    pub fn start(options: &Options) -> Nginx {
        let nginx = installed("/usr/sbin/nginx");
        let dir = TempDir::new("nginx");
        std::fs::write(dir.path("file.txt"), &options.file).unwrap();
        let root = dir.0.display().to_string();
        if options.mtls {
            make_ca_and_certificates(&dir);
        } else if options.tls {
            let made = Command::new("openssl")
                .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"])
                .args(["-keyout", &dir.str("key.pem"), "-out", &dir.str("cert.pem")])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("run openssl");
            assert!(made.success(), "openssl could not make a certificate");
        }
        let (host, netns) = match &options.inside {
            Some((host, netns)) => (host.clone(), Some(netns.clone())),
            None => ("127.0.0.1".to_string(), None),
        };
        // Ports cannot be 0 here (nginx would not tell which it got): free ones, and a retry if taken meanwhile.
        for _attempt in 0..3 {
            let (h1, h2, h2s) = (super::free_port(), super::free_port(), super::free_port());
            if h1 == h2 || h2 == h2s || h1 == h2s {
                continue;
            }
            let user = if unsafe { libc::geteuid() } == 0 { "user root;" } else { "" };
            let clients = if options.mtls {
                format!("ssl_client_certificate {root}/ca.pem;\n    ssl_verify_client on;\n    ")
            } else {
                String::new()
            };
            let tls = if options.tls || options.mtls {
                format!(
                    "server {{\n    listen {host}:{h2s} ssl http2;\n    ssl_certificate {root}/cert.pem;\n    \
                     ssl_certificate_key {root}/key.pem;\n    {clients}root {root};\n    location = /ok {{ return 200 \"ok\\n\"; }}\n  }}\n"
                )
            } else {
                String::new()
            };
            let config = format!(
                "worker_processes 1;\n{user}\npid {root}/nginx.pid;\nerror_log {root}/error.log info;\n\
                 events {{ worker_connections 512; }}\n\
                 http {{\n  access_log {root}/access.log;\n  client_body_temp_path {root}/body;\n  proxy_temp_path {root}/proxy;\n  \
                 fastcgi_temp_path {root}/fastcgi;\n  uwsgi_temp_path {root}/uwsgi;\n  scgi_temp_path {root}/scgi;\n  \
                 {}\n  default_type text/plain;\n  server {{\n    listen {host}:{h1};\n    \
                 listen {host}:{h2} http2;\n    root {root};\n    location = /ok {{ return 200 \"ok\\n\"; }}\n  }}\n  {tls}}}\n",
                options.http
            );
            std::fs::write(dir.path("nginx.conf"), config).unwrap();
            // `ip netns exec` execs nginx: the guard's process is nginx's master either way.
            let mut command = match &netns {
                Some(ns) => {
                    let mut c = Command::new("ip");
                    c.args(["netns", "exec", ns, &nginx]);
                    c
                }
                None => Command::new(&nginx),
            };
            // Its own process group, which its worker joins: `--server-pid` of the master counts both.
            std::os::unix::process::CommandExt::process_group(&mut command, 0);
            let mut master = Guard::spawn(
                command
                    .args(["-p", &dir.str(""), "-c", &dir.str("nginx.conf"), "-e", &dir.str("error.log")])
                    .args(["-g", "daemon off;"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null()),
            );
            let up = super::wait_listening(&format!("{host}:{h1}"), Duration::from_secs(5))
                && super::wait_listening(&format!("{host}:{h2}"), Duration::from_secs(1))
                && (!(options.tls || options.mtls)
                    || super::wait_listening(&format!("{host}:{h2s}"), Duration::from_secs(1)));
            if up && master.wait_for(Duration::ZERO).is_none() {
                return Nginx { master: Some(master), h1, h2, h2s: (options.tls || options.mtls).then_some(h2s), dir };
            }
            drop(master);
            eprintln!("nginx did not start: {}", std::fs::read_to_string(dir.path("error.log")).unwrap_or_default());
        }
        panic!("nginx did not start in 3 attempts (see its error.log above)");
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let Some(mut master) = self.master.take() else { return };
        let workers = children_of(master.id());
        master.signal(libc::SIGTERM);
        if master.wait_for(Duration::from_secs(3)).is_none() {
            drop(master);
        }
        for worker in workers {
            if std::fs::read_to_string(format!("/proc/{worker}/cmdline")).is_ok_and(|c| c.contains("nginx")) {
                unsafe {
                    libc::kill(worker as i32, libc::SIGKILL);
                }
            }
        }
    }
}
