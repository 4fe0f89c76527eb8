//! Node addresses, parsed once: `host:port` as Redis writes it in `MOVED`, `ASK` and
//! `CLUSTER SHARDS`, as users write startup nodes, and as every shell connects to it.
//!
//! The rules, so that no shell splits an address itself:
//!
//! * The port is what follows the last `:`, a number in `1..=65535`.
//! * An IPv6 host may be bracketed (`[::1]:6379`) or not (`::1:6379`, how Redis writes
//!   it); the brackets are not part of the host. [`Endpoint::address`] writes IPv6 hosts
//!   bracketed, so one node has one address text whichever way it was written.
//! * An empty host (`:6379`) is how a node that does not know its own address redirects
//!   (Redis' `cluster-preferred-endpoint-type unknown-endpoint`): the client keeps the
//!   host it sent the command to ([`Endpoint::or_host_of`]). A startup node needs a host.
//! * A host is at most 255 bytes and has no white space or control character.

use alloc::format;
use alloc::string::{String, ToString};
use core::fmt;

use crate::error::{Error, Result};

/// The longest host name accepted, in bytes (DNS' limit).
pub const MAX_HOST_LEN: u32 = 255;

/// A node's `host` and `port`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Endpoint {
    host: String,
    port: u16,
}

impl Endpoint {
    /// Reads `host:port`, `[ipv6]:port`, `ipv6:port` or `:port` (an empty host).
    ///
    /// # Errors
    /// `invalid_argument` for no port, a port outside `1..=65535`, a host with white
    /// space or a control character, unbalanced brackets, or a host over
    /// [`MAX_HOST_LEN`] bytes.
    ///
    /// # Example
    /// ```
    /// use shardroute::session::Endpoint;
    /// let v6 = Endpoint::parse("::1:6379")?;
    /// assert_eq!((v6.host(), v6.port()), ("::1", 6379));
    /// assert_eq!(v6.address(), "[::1]:6379");
    /// assert_eq!(Endpoint::parse("[::1]:6379")?, v6);
    /// assert_eq!(Endpoint::parse("redis-0.local:7000")?.address(), "redis-0.local:7000");
    /// assert_eq!(Endpoint::parse("10.0.0.1").unwrap_err().code(), "invalid_argument");
    /// # Ok::<(), shardroute::Error>(())
    /// ```
    pub fn parse(text: &str) -> Result<Endpoint> {
        let bad = |why: &str| Error::argument(format!("address {text:?}: {why}; expected host:port"));
        let (host, port) = text.rsplit_once(':').ok_or_else(|| bad("no port"))?;
        let port = parse_port(port).ok_or_else(|| bad("the port is not a number in 1..=65535"))?;
        let host = match host.strip_prefix('[') {
            Some(inner) => inner.strip_suffix(']').ok_or_else(|| bad("unbalanced brackets"))?,
            None if host.ends_with(']') => return Err(bad("unbalanced brackets")),
            None => host,
        };
        if host.len() > MAX_HOST_LEN as usize {
            return Err(bad("the host is longer than 255 bytes"));
        }
        if host.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control() || b == b'[' || b == b']') {
            return Err(bad("the host has white space, a control character or a bracket"));
        }
        Ok(Endpoint { host: host.to_string(), port })
    }

    /// As [`parse`](Endpoint::parse), and the host must not be empty (a startup node).
    ///
    /// # Errors
    /// As [`parse`](Endpoint::parse); `invalid_argument` for an empty host.
    pub fn parse_with_host(text: &str) -> Result<Endpoint> {
        let endpoint = Endpoint::parse(text)?;
        if endpoint.host.is_empty() {
            return Err(Error::argument(format!("address {text:?}: no host; expected host:port")));
        }
        Ok(endpoint)
    }

    /// The host, without brackets (may be empty: see [`or_host_of`](Endpoint::or_host_of)).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, in `1..=65535`.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `host:port`, an IPv6 host bracketed: the one text of this endpoint.
    pub fn address(&self) -> String {
        self.to_string()
    }

    /// This endpoint, its empty host replaced by `origin`'s: where a redirect with no host
    /// (`MOVED 3999 :6381`) points, given the node that sent it.
    pub fn or_host_of(self, origin: &Endpoint) -> Endpoint {
        if self.host.is_empty() {
            Endpoint { host: origin.host.clone(), port: self.port }
        } else {
            self
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

fn parse_port(text: &str) -> Option<u16> {
    if text.is_empty() || text.len() > 5 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u16>().ok().filter(|&port| port != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_and_every_refusal() {
        let parsed = |text: &str| Endpoint::parse(text).map(|e| (e.host().to_string(), e.port()));
        assert_eq!(parsed("127.0.0.1:7000").unwrap(), ("127.0.0.1".into(), 7000));
        assert_eq!(parsed("[fe80::1%eth0]:7000").unwrap(), ("fe80::1%eth0".into(), 7000));
        assert_eq!(parsed("fe80::1:7000").unwrap(), ("fe80::1".into(), 7000));
        assert_eq!(parsed(":7000").unwrap(), ("".into(), 7000));
        for bad in ["", "host", "host:", "host:0", "host:65536", "host:+1", "[::1:7000", "::1]:7000", "a b:1", "h\n:1"]
        {
            assert_eq!(Endpoint::parse(bad).unwrap_err().code(), "invalid_argument", "{bad:?}");
        }
        let long = format!("{}:1", "h".repeat(256));
        assert_eq!(Endpoint::parse(&long).unwrap_err().code(), "invalid_argument");
        assert_eq!(Endpoint::parse_with_host(":7000").unwrap_err().code(), "invalid_argument");
    }

    #[test]
    fn an_empty_host_is_the_origins() {
        let origin = Endpoint::parse("[::1]:7000").unwrap();
        assert_eq!(Endpoint::parse(":7001").unwrap().or_host_of(&origin).address(), "[::1]:7001");
        assert_eq!(Endpoint::parse("10.0.0.2:7001").unwrap().or_host_of(&origin).address(), "10.0.0.2:7001");
    }
}
