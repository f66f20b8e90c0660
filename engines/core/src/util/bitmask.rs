//! Token bitmasks: bit `i % 32` of word `i / 32` set means token `i` is allowed — the
//! layout outlines-core, llguidance and xgrammar share.

pub type Mask = [u32];

#[inline]
pub fn set_bit(mask: &mut Mask, id: u32) {
    mask[(id / 32) as usize] |= 1 << (id % 32);
}

#[inline]
pub fn get_bit(mask: &Mask, id: u32) -> bool {
    mask[(id / 32) as usize] & (1 << (id % 32)) != 0
}

/// Ids of the set bits, ascending.
pub fn ones(mask: &Mask) -> Vec<u32> {
    let mut out = Vec::new();
    for (w, &word) in mask.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            out.push(w as u32 * 32 + bits.trailing_zeros());
            bits &= bits - 1;
        }
    }
    out
}
