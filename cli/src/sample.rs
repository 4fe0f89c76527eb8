//! Key sets for the commands that measure (`diff`, `stats`, `plan`): listed keys or a
//! sample, routed with progress, counted per node or per pair of nodes.

use std::cell::Cell;

use shardroute::{Key, OwnedKey, Router};

use crate::input::{show_key, Failure, Input, KeyLines, Outcome};
use crate::progress::Progress;

/// Most sampled keys (`--sample` of `diff`, `stats`, `plan`): a billion, a minute or two of
/// routing in a release build (progress is shown on stderr). More is refused.
pub const MAX_SAMPLE: u64 = 1_000_000_000;

/// Keys to measure with.
pub enum Keys {
    /// Keys read from a file as they are routed (counted as they are read).
    Listed { input: Input, integers: bool, count: Cell<u64> },
    /// `count` generated keys: `sample:0`, `sample:1`, ... or, for integer keys, a
    /// SplitMix64 sequence (spread over all 64 bits, as real ids' hashes are not).
    Sample { count: u64, integers: bool },
}

impl Keys {
    /// `--keys FILE` if given, else a sample of `sample` keys.
    pub fn choose(keys: Option<&Input>, sample: u64, integers: bool) -> Outcome<Keys> {
        match keys {
            Some(input) => Ok(Keys::Listed { input: input.clone(), integers, count: Cell::new(0) }),
            None if sample == 0 => Err(Failure::input("--sample must be at least 1")),
            None if sample > MAX_SAMPLE => Err(Failure::input(format!(
                "--sample {sample}: limit_exceeded: at most {} sampled keys",
                thousands(MAX_SAMPLE)
            ))),
            None => Ok(Keys::Sample { count: sample, integers }),
        }
    }

    /// How many keys: listed keys are counted once [`Keys::each`] has read them.
    pub fn len(&self) -> u64 {
        match self {
            Keys::Listed { count, .. } => count.get(),
            Keys::Sample { count, .. } => *count,
        }
    }

    /// What the keys are, for reports: "100,000 sampled keys" or "12 keys".
    pub fn describe(&self) -> String {
        match self {
            Keys::Listed { count, .. } => format!("{} keys", thousands(count.get())),
            Keys::Sample { count, .. } => format!("{} sampled keys", thousands(*count)),
        }
    }

    /// Calls `visit` with every key, in order, showing progress.
    pub fn each(&self, mut visit: impl FnMut(Key<'_>) -> Result<(), shardroute::Error>) -> Outcome {
        let refused = |key: Key<'_>, err: shardroute::Error| {
            Failure::input(format!("key {:?}: {err}", show_key(&OwnedKey::from(key))))
        };
        let (count, integers) = match self {
            Keys::Listed { input, integers, count } => {
                let mut lines = KeyLines::open(input, *integers)?;
                let mut progress = Progress::optional(lines.size(), "bytes");
                let mut read = 0;
                while let Some(key) = lines.next_key()? {
                    progress.at_of(read, lines.consumed());
                    visit(key.as_key()).map_err(|err| refused(key.as_key(), err))?;
                    read += 1;
                }
                count.set(read);
                return Ok(());
            }
            Keys::Sample { count, integers } => (*count, *integers),
        };
        let mut progress = Progress::new(count, "keys");
        let mut text = String::new();
        for index in 0..count {
            progress.at(index);
            let key = if integers {
                Key::U64(splitmix64(index))
            } else {
                text.clear();
                text.push_str("sample:");
                text.push_str(&index.to_string());
                Key::Bytes(text.as_bytes())
            };
            visit(key).map_err(|err| refused(key, err))?;
        }
        Ok(())
    }

    /// Keys per node index of `router`.
    pub fn loads(&self, router: &Router) -> Outcome<Vec<u64>> {
        let mut counts = vec![0u64; router.nodes().len()];
        self.each(|key| {
            counts[router.node_index(key)? as usize] += 1;
            Ok(())
        })?;
        Ok(counts)
    }

    /// Keys per (node of `old`, node of `new`): `flows[i][j]` keys went from `old`'s node
    /// `i` to `new`'s node `j`.
    pub fn flows(&self, old: &Router, new: &Router) -> Outcome<Vec<Vec<u64>>> {
        let mut flows = vec![vec![0u64; new.nodes().len()]; old.nodes().len()];
        self.each(|key| {
            flows[old.node_index(key)? as usize][new.node_index(key)? as usize] += 1;
            Ok(())
        })?;
        Ok(flows)
    }
}

/// The `index`-th output of SplitMix64 from seed 0.
fn splitmix64(index: u64) -> u64 {
    let mut z = index.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `1234567` as `1,234,567`.
pub fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// `part / whole` as a percentage with two decimals.
pub fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return String::from("0.00%");
    }
    format!("{:.2}%", part as f64 * 100.0 / whole as f64)
}

/// Rows as aligned columns: the first left-aligned, the others right-aligned.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|title| title.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = header.iter().map(|title| title.to_string()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (column, cell) in row.iter().enumerate().take(columns) {
            let pad = widths[column] - cell.chars().count();
            if column == 0 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str("  ");
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_for_people() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(percent(1, 3), "33.33%");
        assert_eq!(percent(0, 0), "0.00%");
    }

    #[test]
    fn tables_align() {
        let text = table(&["node", "keys"], &[vec!["a".into(), "10".into()], vec!["bbb".into(), "5".into()]]);
        assert_eq!(text, "node  keys\na       10\nbbb      5\n");
    }
}
