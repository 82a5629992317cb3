//! CURVE certificate files shared with pyzmq's `zmq.auth`: files written by
//! `create_certificates` load in oxmq, and files oxmq writes load in pyzmq with the same keys
//! and the same layout line for line (only the banner's date and tool name differ).

mod common;

use common::*;
use oxmq::auth::{load_dir, Certificate};
use std::path::{Path, PathBuf};
use std::process::Command;

struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("oxmq-certs-{}-{n}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs a Python snippet with `zmq` imported and `d` set to `dir`; returns its stdout lines.
fn py(dir: &Path, code: &str) -> Vec<String> {
    let script = format!("import sys, zmq, zmq.auth\nd = sys.argv[1]\n{code}");
    let out = Command::new(python()).args(["-c", &script]).arg(dir).output().expect("run python");
    assert!(out.status.success(), "python failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}

#[test]
fn pyzmq_certificates_load_in_oxmq() {
    require_pyzmq!();
    let dir = TempDir::new();
    let lines = py(
        &dir.0,
        "pub, sec = zmq.auth.create_certificates(d, 'server', metadata={'name': 'srv', 'role': 'x'})\n\
         zmq.auth.create_certificates(d, 'client')\n\
         p, s = zmq.auth.load_certificate(sec)\n\
         print(p.decode()); print(s.decode())",
    );
    let (public, secret) = (&lines[0], &lines[1]);
    let pub_cert = Certificate::load(&dir.0.join("server.key")).unwrap();
    assert_eq!(&pub_cert.public_z85(), public);
    assert!(pub_cert.secret_key().is_none());
    let sec_cert = Certificate::load(&dir.0.join("server.key_secret")).unwrap();
    assert_eq!(&sec_cert.public_z85(), public);
    assert_eq!(sec_cert.secret_z85().as_ref(), Some(secret));
    // pyzmq writes metadata (bare values) into the secret file only.
    assert_eq!(sec_cert.meta("name"), Some("srv"));
    assert_eq!(sec_cert.meta("role"), Some("x"));
    // The directory holds two public certificates (`*.key`); secret files are not loaded.
    let all = load_dir(&dir.0).unwrap();
    assert_eq!(all.len(), 2);
    assert!(all.contains_key(pub_cert.public_key()));
}

#[test]
fn oxmq_certificates_load_in_pyzmq() {
    require_pyzmq!();
    let dir = TempDir::new();
    let mut cert = Certificate::generate();
    cert.set_meta("name", "ox").unwrap();
    let (public_file, secret_file) = cert.save(&dir.0, "ox").unwrap();
    assert_eq!(public_file, dir.0.join("ox.key"));
    assert_eq!(secret_file, dir.0.join("ox.key_secret"));
    let plain = Certificate::generate();
    plain.save(&dir.0, "plain").unwrap();
    let lines = py(
        &dir.0,
        "import os\n\
         for n in ('ox.key', 'ox.key_secret', 'plain.key_secret'):\n\
         \x20   p, s = zmq.auth.load_certificate(os.path.join(d, n))\n\
         \x20   print(p.decode(), s.decode() if s else '-')\n\
         print(len(zmq.auth.load_certificates(d)))\n\
         print(oct(os.stat(os.path.join(d, 'ox.key_secret')).st_mode & 0o777))\n\
         # The same key pair written by pyzmq, for a line-by-line comparison.\n\
         from zmq.auth.certs import _write_key_file, _cert_public_banner, _cert_secret_banner\n\
         p, s = zmq.auth.load_certificate(os.path.join(d, 'plain.key_secret'))\n\
         _write_key_file(os.path.join(d, 'py.pub'), _cert_public_banner, p)\n\
         _write_key_file(os.path.join(d, 'py.sec'), _cert_secret_banner, p, secret_key=s)",
    );
    assert_eq!(lines[0], format!("{} -", cert.public_z85()));
    assert_eq!(lines[1], format!("{} {}", cert.public_z85(), cert.secret_z85().unwrap()));
    assert_eq!(lines[2], format!("{} {}", plain.public_z85(), plain.secret_z85().unwrap()));
    assert_eq!(lines[3], "2");
    assert_eq!(lines[4], "0o600");
    // Without metadata, the files match pyzmq's byte for byte after the first (dated) line.
    for (ours, theirs) in [("plain.key", "py.pub"), ("plain.key_secret", "py.sec")] {
        let a = std::fs::read_to_string(dir.0.join(ours)).unwrap();
        let b = std::fs::read_to_string(dir.0.join(theirs)).unwrap();
        let (a1, a_rest) = a.split_once('\n').unwrap();
        let (b1, b_rest) = b.split_once('\n').unwrap();
        assert_eq!(a_rest, b_rest, "{ours} vs pyzmq's {theirs}");
        assert!(a1.starts_with("#   ****  Generated on ") && b1.starts_with("#   ****  Generated on "));
    }
}
