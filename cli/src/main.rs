//! `shardroute`: the routing core on the command line. Every answer comes from the
//! `shardroute` crate, the same code the Python, Node and WASM packages run.
//!
//! Exit codes: 0 done, 1 a problem found (`validate`), 2 bad usage or input (an
//! unreadable file, text that is not JSON, a document or key the core refuses, a stored
//! document followers refuse without `--replace`, a user or password etcd or a ZooKeeper
//! node refuses), 3 a
//! compare-and-swap lost (`publish`: the key or node changed since it was read), 4 a
//! source that could not be reached or did not answer as one (etcd, ZooKeeper).

/// `println!` that ignores a closed stdout (`shardroute ... | head`) instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `print!` that ignores a closed stdout.
macro_rules! say_raw {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

mod convert;
mod distribute;
mod input;
mod lookup;
mod measure;
mod plan;
mod progress;
mod sample;
mod serve;
mod source;
mod svg;
mod tls;
mod wire;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use input::{Input, Outcome};

#[derive(Parser)]
#[command(name = "shardroute", version, about = "Route keys, explain, validate, plan, diff and measure shardroute topology documents.", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where keys come from: arguments, `--keys FILE`, or stdin.
#[derive(Args)]
struct KeyOptions {
    /// Read keys from FILE, one per line (`-`: stdin)
    #[arg(long = "keys", value_name = "FILE")]
    keys: Option<String>,
    /// Read every key as an unsigned 64-bit integer (a u64 key, not its text)
    #[arg(long)]
    u64: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Route keys: key, shard, node (and replicas) per line
    Route {
        /// The topology document (`-`: stdin)
        topology: String,
        /// Keys to route; without them, keys come from --keys or stdin
        #[arg(value_name = "KEYS")]
        key_args: Vec<String>,
        #[command(flatten)]
        key_options: KeyOptions,
        /// Also list N replicas per key, owner first
        #[arg(long, value_name = "N")]
        replicas: Option<u32>,
        /// One JSON object per line
        #[arg(long)]
        json: bool,
    },
    /// Explain how one key is routed: bytes hashed, hash, what the strategy hit, owner
    Explain {
        /// The topology document (`-`: stdin)
        topology: String,
        /// The key
        key: String,
        /// Read the key as an unsigned 64-bit integer
        #[arg(long)]
        u64: bool,
        /// How many replicas to list (default: up to 3)
        #[arg(long, value_name = "N")]
        replicas: Option<u32>,
        /// One JSON object
        #[arg(long)]
        json: bool,
    },
    /// Check a topology document: `ok`, or the problem and its JSON path (exit 1)
    Validate {
        /// The topology document (`-`: stdin)
        topology: String,
    },
    /// Plan a change of nodes: the new document and what moves
    Plan {
        /// The topology document (`-`: stdin)
        topology: String,
        /// Add a node, `ID` or `ID:WEIGHT` (repeatable)
        #[arg(long, value_name = "ID[:W]")]
        add: Vec<String>,
        /// Remove a node (drained first in a vbucket dictionary)
        #[arg(long, value_name = "ID")]
        remove: Vec<String>,
        /// A node whose data is lost (its replicas are promoted in a vbucket dictionary)
        #[arg(long, value_name = "ID")]
        fail: Vec<String>,
        /// Give a node a new weight, `ID:WEIGHT`
        #[arg(long, value_name = "ID:W")]
        reweight: Vec<String>,
        /// A vbucket dictionary balanced by load: FILE (`-`: stdin) holds a JSON array of
        /// one measured weight per vbucket (unsigned integers: bytes, requests/s, keys)
        #[arg(long, value_name = "FILE")]
        vbucket_weights: Option<String>,
        /// Sampled keys measuring the movement of node-list strategies
        #[arg(long, value_name = "N", default_value_t = 100_000)]
        sample: u64,
        /// Write the new document to FILE instead of printing it
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// One JSON object: topology, moves, nodes
        #[arg(long)]
        json: bool,
    },
    /// Compare two topologies: moved fraction and the node-to-node flow matrix
    Diff {
        /// The topology before (`-`: stdin)
        old: String,
        /// The topology after (`-`: stdin)
        new: String,
        #[command(flatten)]
        key_options: KeyOptions,
        /// Without --keys, route N sampled keys
        #[arg(long, value_name = "N", default_value_t = 100_000)]
        sample: u64,
        /// One JSON object
        #[arg(long)]
        json: bool,
    },
    /// Per-node load of sampled (or listed) keys: max/mean, coefficient of variation, a chart
    Stats {
        /// The topology document (`-`: stdin)
        topology: String,
        #[command(flatten)]
        key_options: KeyOptions,
        /// Without --keys, route N sampled keys
        #[arg(long, value_name = "N", default_value_t = 100_000)]
        sample: u64,
        /// Write an SVG bar chart of the load to FILE
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
        /// One JSON object
        #[arg(long)]
        json: bool,
    },
    /// Publish a document to etcd or ZooKeeper: checked by the core's follower (valid, epoch = the stored one + 1), written with a compare-and-swap
    Publish {
        /// The document (`-`: stdin)
        document: String,
        #[command(flatten)]
        target: TargetOptions,
        /// Repair: replace a stored document that followers refuse, still with a compare-and-swap; the new epoch must be above the stored
        /// document's and (etcd) above the last one followers could install from the key's history
        #[arg(long)]
        replace: bool,
    },
    /// Follow a topology from etcd, ZooKeeper or HTTP and print each epoch as it arrives (one JSON line each)
    Watch {
        #[command(flatten)]
        source: SourceOptions,
        /// Exit after N epochs
        #[arg(long, value_name = "N")]
        count: Option<u64>,
    },
    /// Follow a topology from etcd or ZooKeeper (or HTTP) and serve it over HTTP with ETags and long polls
    Serve {
        #[command(flatten)]
        source: SourceOptions,
        /// Where to listen (port 0: any free port; the URL is printed)
        #[arg(long, value_name = "ADDRESS", default_value = "127.0.0.1:8379")]
        listen: String,
        /// Most connections open at once; past it, the oldest still sending its request is
        /// dropped for a newcomer, or newcomers wait in the listen backlog
        #[arg(long, value_name = "N", default_value_t = serve::MAX_CONNECTIONS)]
        max_connections: usize,
    },
    /// Convert what a real system reports into a topology document
    Convert {
        /// The input's kind
        #[arg(long, value_enum)]
        from: Source,
        /// The reply, config or token dump, as JSON (`-`: stdin)
        input: String,
        /// The document's epoch (default: 1, or a Couchbase config's revision)
        #[arg(long)]
        epoch: Option<u64>,
        /// Write the document to FILE instead of stdout
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

/// Where `publish` writes a topology.
#[derive(Args)]
struct TargetOptions {
    /// etcd's client URLs, `http://` or `https://`, comma-separated (its v3 JSON gateway; a member that cannot serve is left for the next), with --key
    #[arg(long, value_name = "URLS")]
    etcd: Option<String>,
    /// The etcd key that holds the document
    #[arg(long, value_name = "KEY")]
    key: Option<String>,
    /// ZooKeeper's members, `host:port,host:port,...` (the first that answers is used), with --path
    #[arg(long, value_name = "HOSTS", conflicts_with_all = ["etcd", "key"])]
    zookeeper: Option<String>,
    /// The ZooKeeper node that holds the document (created when absent, and its missing parents, empty)
    #[arg(long, value_name = "PATH", conflicts_with_all = ["etcd", "key"])]
    path: Option<String>,
    #[command(flatten)]
    etcd_options: EtcdOptions,
    #[command(flatten)]
    zookeeper_options: ZooKeeperOptions,
}

// A flag of one store with the other's is refused (a `requires` alone is not: clap takes
// a required flag that conflicts with one given as satisfied).
const ETCD: [&str; 2] = ["etcd", "key"];
const ZOOKEEPER: [&str; 2] = ["zookeeper", "path"];
/// The stores' own flags (their passwords left out: one in the environment is not a flag given).
const STORE_OPTIONS: [&str; 8] = [
    "etcd_ca",
    "etcd_cert",
    "etcd_key",
    "etcd_user",
    "etcd_timeout_ms",
    "etcd_idle_ms",
    "zookeeper_user",
    "zookeeper_session_ms",
];

/// etcd's TLS and authentication (with --etcd).
#[derive(Args)]
struct EtcdOptions {
    /// PEM file of the certificate authorities that sign etcd's server certificates (https:// members; without it, the Mozilla roots)
    #[arg(long, value_name = "FILE", requires = "etcd", conflicts_with_all = ZOOKEEPER)]
    etcd_ca: Option<PathBuf>,
    /// PEM file of this client's certificate (etcd's --client-cert-auth), with --etcd-key
    #[arg(long, value_name = "FILE", requires_all = ["etcd", "etcd_key"], conflicts_with_all = ZOOKEEPER)]
    etcd_cert: Option<PathBuf>,
    /// PEM file of the client certificate's private key
    #[arg(long, value_name = "FILE", requires_all = ["etcd", "etcd_cert"], conflicts_with_all = ZOOKEEPER)]
    etcd_key: Option<PathBuf>,
    /// etcd user (authentication on): a token is asked for and renewed when it expires
    #[arg(long, value_name = "NAME", requires_all = ["etcd", "etcd_password"], conflicts_with_all = ZOOKEEPER)]
    etcd_user: Option<String>,
    /// The password of --etcd-user (better in the environment: it stays out of `ps`)
    #[arg(long, value_name = "PASSWORD", env = "SHARDROUTE_ETCD_PASSWORD", hide_env_values = true)]
    etcd_password: Option<String>,
    /// A request to etcd that has not been answered (a watch: opened) in MS is left for the next member (default: the core session's)
    #[arg(long, value_name = "MS", requires = "etcd", conflicts_with_all = ZOOKEEPER)]
    etcd_timeout_ms: Option<u64>,
    /// A watch quiet for MS is answered by a read, which tells a quiet key from a paused member; 0: never (default: the core session's)
    #[arg(long, value_name = "MS", requires = "etcd", conflicts_with_all = ZOOKEEPER)]
    etcd_idle_ms: Option<u64>,
}

impl EtcdOptions {
    fn flags(self) -> distribute::EtcdFlags {
        let EtcdOptions { etcd_ca, etcd_cert, etcd_key, etcd_user, etcd_password, etcd_timeout_ms, etcd_idle_ms } =
            self;
        let tls = tls::Files { ca: etcd_ca, cert: etcd_cert, key: etcd_key };
        // The password only with a user: one left in the environment is not for every command.
        let password = etcd_password.filter(|_| etcd_user.is_some());
        let (request_timeout_ms, idle_ms) = (etcd_timeout_ms, etcd_idle_ms);
        distribute::EtcdFlags { tls, user: etcd_user, password, request_timeout_ms, idle_ms }
    }
}

/// ZooKeeper's authentication and session (with --zookeeper).
#[derive(Args)]
struct ZooKeeperOptions {
    /// ZooKeeper user (digest authentication, sent as each session opens; a node publish creates is this user's only)
    #[arg(long, value_name = "NAME", requires_all = ["zookeeper", "zookeeper_password"], conflicts_with_all = ETCD)]
    zookeeper_user: Option<String>,
    /// The password of --zookeeper-user (better in the environment: it stays out of `ps`)
    #[arg(long, value_name = "PASSWORD", env = "SHARDROUTE_ZOOKEEPER_PASSWORD", hide_env_values = true)]
    zookeeper_password: Option<String>,
    /// The session timeout asked of ZooKeeper (the server grants one within its bounds), which sets the pings and when a silent member is left (default: the core session's)
    #[arg(long, value_name = "MS", requires = "zookeeper", conflicts_with_all = ETCD)]
    zookeeper_session_ms: Option<u64>,
}

impl ZooKeeperOptions {
    fn flags(self) -> distribute::ZooKeeperFlags {
        let ZooKeeperOptions { zookeeper_user, zookeeper_password, zookeeper_session_ms } = self;
        // The password only with a user: one left in the environment is not for every command.
        let password = zookeeper_password.filter(|_| zookeeper_user.is_some());
        distribute::ZooKeeperFlags { user: zookeeper_user, password, session_timeout_ms: zookeeper_session_ms }
    }
}

/// Where `watch` and `serve` follow a topology from.
#[derive(Args)]
struct SourceOptions {
    /// etcd's client URLs, `http://` or `https://`, comma-separated (its v3 JSON gateway; a member that cannot serve is left for the next), with --key
    #[arg(long, value_name = "URLS")]
    etcd: Option<String>,
    /// The etcd key that holds the document
    #[arg(long, value_name = "KEY")]
    key: Option<String>,
    /// ZooKeeper's members, `host:port,host:port,...` (the next is tried when one is lost), with --path
    #[arg(long, value_name = "HOSTS", conflicts_with_all = ["etcd", "key"])]
    zookeeper: Option<String>,
    /// The ZooKeeper node that holds the document
    #[arg(long, value_name = "PATH", conflicts_with_all = ["etcd", "key"])]
    path: Option<String>,
    /// A URL that answers with the document and an ETag (a file behind a CDN, `serve`)
    #[arg(long, value_name = "URL", conflicts_with_all = [&ETCD[..], &ZOOKEEPER, &STORE_OPTIONS].concat())]
    http: Option<String>,
    #[command(flatten)]
    etcd_options: EtcdOptions,
    #[command(flatten)]
    zookeeper_options: ZooKeeperOptions,
}

impl SourceOptions {
    fn source(self) -> Outcome<distribute::Source> {
        let SourceOptions { etcd, key, zookeeper, path, http, etcd_options, zookeeper_options } = self;
        let (etcd_options, zookeeper_options) = (etcd_options.flags(), zookeeper_options.flags());
        let flags = distribute::SourceFlags { etcd, key, zookeeper, path, http, etcd_options, zookeeper_options };
        distribute::Source::new(flags)
    }
}

impl TargetOptions {
    fn target(self) -> Outcome<distribute::Source> {
        let TargetOptions { etcd, key, zookeeper, path, etcd_options, zookeeper_options } = self;
        let (etcd_options, zookeeper_options) = (etcd_options.flags(), zookeeper_options.flags());
        let flags = distribute::SourceFlags { etcd, key, zookeeper, path, http: None, etcd_options, zookeeper_options };
        distribute::Source::target(flags)
    }
}

/// The inputs `convert` reads.
#[derive(Clone, Copy, ValueEnum)]
enum Source {
    /// A `CLUSTER SHARDS` reply (objects or RESP2 flat arrays)
    RedisShards,
    /// A `CLUSTER SLOTS` reply
    RedisSlots,
    /// A Couchbase bucket config (what the server serves at /pools/default/buckets/NAME)
    Couchbase,
    /// A Cassandra token dump: node id → its tokens
    Cassandra,
}

fn run(cli: Cli) -> Outcome {
    match cli.command {
        Command::Route { topology, key_args, key_options, replicas, json } => {
            lookup::route(&Input(topology), key_args, key_options.keys.map(Input), key_options.u64, replicas, json)
        }
        Command::Explain { topology, key, u64, replicas, json } => {
            lookup::explain(&Input(topology), &key, u64, replicas, json)
        }
        Command::Validate { topology } => lookup::validate(&Input(topology)),
        Command::Plan { topology, add, remove, fail, reweight, vbucket_weights, sample, out, json } => {
            let change = plan::Change { add, remove, fail, reweight, vbucket_weights: vbucket_weights.map(Input) };
            plan::plan(&Input(topology), &change, sample, out.as_deref(), json)
        }
        Command::Diff { old, new, key_options, sample, json } => {
            let keys = key_options.keys.map(Input);
            measure::diff(&Input(old), &Input(new), keys.as_ref(), sample, key_options.u64, json)
        }
        Command::Stats { topology, key_options, sample, svg, json } => {
            let keys = key_options.keys.map(Input);
            measure::stats(&Input(topology), keys.as_ref(), sample, key_options.u64, svg.as_deref(), json)
        }
        Command::Convert { from, input, epoch, out } => convert::convert(from, &Input(input), epoch, out.as_deref()),
        Command::Publish { document, target, replace } => {
            distribute::publish(&Input(document), &target.target()?, replace)
        }
        Command::Watch { source, count } => distribute::watch(&source.source()?, count),
        Command::Serve { source, listen, max_connections } => {
            distribute::serve(source.source()?, &listen, max_connections)
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("shardroute: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
