//! Ports for the servers the CLI's tests start, without a race (issue 41): never "bind
//! port 0, read the number, drop the listener, let a server bind it later" (an outgoing
//! connection may take the number in between: port 0 and outgoing connections share the
//! kernel's ephemeral range). `shardroute serve --listen 127.0.0.1:0` binds port 0 itself
//! and prints its URL; a server that can only be handed a number (etcd, ZooKeeper; one
//! restarted on its old port) gets ports of [`reserve`]: outside the ephemeral range, each
//! locked for this process by a file in [`PORT_LOCKS`] (the same locks as
//! examples/harness.py's and bindings-wasm/test/edge/ports.mjs's, so parallel runs never
//! share a port), and [`start_on_ports`] starts it again on fresh ports when it failed
//! because something else held one. scripts/check-ports.py keeps the old pattern out.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::io::Write;
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

/// Where the per-port lock files live (each holds its process's PID).
pub const PORT_LOCKS: &str = "/tmp/shardroute-ports";
const PREFERRED: (u32, u32) = (20_000, 32_000);

/// Ports locked for this process; unlocked when dropped (a process gone leaves locks that
/// the next run takes over).
pub struct Reserved {
    pub ports: Vec<u16>,
}

impl Drop for Reserved {
    fn drop(&mut self) {
        for port in &self.ports {
            let path = lock_path(*port);
            if std::fs::read_to_string(&path).is_ok_and(|pid| pid.trim() == std::process::id().to_string()) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// Whether a server's message (its log, its error) says a port was taken.
pub fn address_in_use(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    ["address already in use", "could not bind", "bindexception", "eaddrinuse"].iter().any(|what| text.contains(what))
}

/// [low, high): the preferred range less the kernel's ephemeral one
/// (/proc/sys/net/ipv4/ip_local_port_range), where port 0 and outgoing connections take theirs.
pub fn port_range() -> (u32, u32) {
    let (first, last) = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| {
            let mut parts = text.split_whitespace().map(|part| part.parse::<u32>().ok());
            Some((parts.next()??, parts.next()??))
        })
        .unwrap_or((32_768, 60_999));
    let (low, high) = PREFERRED;
    if last < low || first >= high {
        (low, high)
    } else if first >= low + 1_000 {
        (low, first)
    } else if 65_536 - (last + 1) >= 1_000 {
        (last + 1, 65_536)
    } else {
        panic!("no 1000 ports outside the ephemeral range {first}-{last}")
    }
}

fn lock_path(port: u16) -> PathBuf {
    PathBuf::from(PORT_LOCKS).join(port.to_string())
}

fn alive(pid: u32) -> bool {
    PathBuf::from(format!("/proc/{pid}")).exists()
}

/// Takes the lock file of `port` for this process; a dead process's lock is taken over.
fn lock(port: u16) -> bool {
    let path = lock_path(port);
    for _ in 0..2 {
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut file) => {
                let _ = writeln!(file, "{}", std::process::id());
                return true;
            }
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                let holder = std::fs::read_to_string(&path).ok().and_then(|pid| pid.trim().parse::<u32>().ok());
                if holder.is_some_and(alive) {
                    return false;
                }
                let _ = std::fs::remove_file(&path);
            }
            Err(err) => panic!("cannot lock a port in {PORT_LOCKS}: {err}"),
        }
    }
    false
}

/// `count` distinct ports of [`port_range`], locked for this process while the returned
/// [`Reserved`] lives: no other run of ours is handed them and no outgoing connection takes
/// them, so a server may bind one later, and again after a restart. Nothing listens on one
/// until a server is started there: a port for "nobody answers" too.
pub fn reserve(count: usize) -> Reserved {
    static CURSOR: OnceLock<AtomicU32> = OnceLock::new();
    let (low, high) = port_range();
    let _ = std::fs::create_dir_all(PORT_LOCKS);
    // Any user's run shares the locks (a failure leaves the directory as it is: usable).
    let _ = std::fs::set_permissions(PORT_LOCKS, std::os::unix::fs::PermissionsExt::from_mode(0o1777));
    let cursor =
        CURSOR.get_or_init(|| AtomicU32::new(low + (RandomState::new().hash_one(0u8) % u64::from(high - low)) as u32));
    let mut ports = Vec::new();
    for _ in low..high {
        if ports.len() == count {
            break;
        }
        let port = (low + (cursor.fetch_add(1, Ordering::Relaxed) - low) % (high - low)) as u16;
        // Something outside our runs listening there: the port stays locked (skipped).
        if lock(port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
            ports.push(port);
        }
    }
    assert_eq!(ports.len(), count, "no {count} free ports left in {low}-{high} (locks in {PORT_LOCKS})");
    Reserved { ports }
}

/// `start(ports)` with `count` ports of [`reserve`]; when it fails with a message that says
/// a port was taken ([`address_in_use`]: put the server's log in it), again with fresh
/// ports, up to 6 times. Panics with the last message otherwise.
pub fn start_on_ports<T>(count: usize, mut start: impl FnMut(&[u16]) -> Result<T, String>) -> (T, Reserved) {
    let mut tries = 0;
    loop {
        tries += 1;
        let reserved = reserve(count);
        match start(&reserved.ports) {
            Ok(started) => return (started, reserved),
            Err(message) if tries < 6 && address_in_use(&message) => continue,
            Err(message) => panic!("{message}"),
        }
    }
}

#[test]
fn reserved_ports_are_outside_the_ephemeral_range_locked_and_unlocked_on_drop() {
    let (low, high) = port_range();
    let reserved = reserve(3);
    let mut distinct = reserved.ports.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 3);
    for port in &reserved.ports {
        assert!((low..high).contains(&u32::from(*port)), "{port} outside {low}-{high}");
        let holder = std::fs::read_to_string(lock_path(*port)).unwrap();
        assert_eq!(holder.trim(), std::process::id().to_string());
        assert!(!lock(*port), "a port locked by a live process is not handed out again");
    }
    let ports = reserved.ports.clone();
    drop(reserved);
    assert!(ports.iter().all(|port| !lock_path(*port).exists()));
}

#[test]
fn start_on_ports_starts_again_on_fresh_ports_only_when_a_port_was_taken() {
    let mut tried = Vec::new();
    let (started, reserved) = start_on_ports(1, |ports| {
        tried.push(ports[0]);
        if tried.len() < 3 {
            Err(format!("listen tcp 127.0.0.1:{}: bind: address already in use", ports[0]))
        } else {
            Ok(ports[0])
        }
    });
    assert_eq!(tried.len(), 3);
    assert_eq!((started, reserved.ports.clone()), (tried[2], vec![tried[2]]));
    let other = std::panic::catch_unwind(|| start_on_ports(1, |_| Err::<(), _>("no such file".to_string())));
    assert!(other.is_err(), "any other failure is not retried");
}
