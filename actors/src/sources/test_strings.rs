//! Random strings for the property tests of the name and quantity rules: a cheap, seeded
//! generator (xorshift), so every run tries the same strings and a failure can be replayed.
//! Entry point: [`random_strings`].

/// `count` strings of up to `max_parts - 1` parts picked from `alphabet`, from `seed`.
pub(crate) fn random_strings<'a>(
    alphabet: &'a [&'a str],
    max_parts: u64,
    count: usize,
    seed: u64,
) -> impl Iterator<Item = String> + 'a {
    let mut state = seed | 1;
    (0..count).map(move |_| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let mut bits = state;
        let parts = state % max_parts;
        (0..parts)
            .map(|_| {
                bits = bits.rotate_right(5) ^ 0x9e37_79b9_7f4a_7c15;
                let pick = usize::try_from(bits % alphabet.len() as u64).unwrap_or(0);
                alphabet[pick]
            })
            .collect()
    })
}
