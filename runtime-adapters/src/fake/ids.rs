//! Identifiers shaped like containerd's: 64 lowercase hex digits that look random.
//!
//! Object ids come from a counter mixed with a per-runtime seed (so a new fake runtime, after a
//! restart, never hands out an id an old one used); image ids are a digest of the reference, so
//! the same image always has the same id.

/// Hands out unique object ids.
#[derive(Debug)]
pub(super) struct IdSource {
    seed: u64,
    issued: u64,
}

/// Odd constant (the golden ratio in 64 bits): stepping by it visits every `u64` once.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

impl IdSource {
    /// A source whose ids depend on `seed`.
    pub(super) fn seeded(seed: u64) -> Self {
        Self { seed, issued: 0 }
    }

    /// The next id; never the same twice for one source.
    pub(super) fn next_id(&mut self) -> String {
        self.issued = self.issued.wrapping_add(1);
        // `mix` is a bijection, so distinct counters give distinct first words.
        hex256(self.seed.wrapping_add(self.issued.wrapping_mul(GAMMA)))
    }
}

/// A 64-hex digest of `text` (FNV-1a, spread over 256 bits): stable across runs.
pub(super) fn digest(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    hex256(hash)
}

/// Expands one word into 64 hex digits, the first 16 being `mix(word)`.
fn hex256(word: u64) -> String {
    let first = mix(word);
    let second = mix(first ^ GAMMA);
    let third = mix(second ^ GAMMA);
    let fourth = mix(third ^ GAMMA);
    format!("{first:016x}{second:016x}{third:016x}{fourth:016x}")
}

/// The splitmix64 finalizer: a bijection on `u64` that scatters neighbouring inputs.
fn mix(word: u64) -> u64 {
    let mut z = word;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
