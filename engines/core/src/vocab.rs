//! Vocabularies: token id -> bytes, with special ids and an EOS id.
//!
//! Token bytes live in one flat buffer. The [`TokenTrie`] over them, and the walk tries
//! and token slices of [`Prepared`], are built lazily, once per vocabulary, and shared by
//! every index built afterwards.

use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::FxHashMap;
use std::time::Instant;

use crate::dfa::ByteDfa;
use crate::error::Error;
use crate::walk::slices::{Prepared, JSON_SLICES, MAX_SLICES};
use crate::walk::trie::TokenTrie;

/// The token texts, cheap to share: an index keeps a handle to walk tokens on demand.
#[derive(Clone)]
pub struct Tokens {
    bytes: Arc<[u8]>,
    offsets: Arc<[u32]>,
}

impl Tokens {
    #[inline]
    pub fn get(&self, id: u32) -> &[u8] {
        let i = id as usize;
        &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

/// The minimized DFA of a slice pattern, built once per process (vocabularies are often
/// made with the same default slices).
fn slice_dfa(pattern: &str) -> Result<ByteDfa, Error> {
    type Cache = Mutex<FxHashMap<String, ByteDfa>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(d) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(pattern) {
        return Ok(d.clone());
    }
    let dfa = ByteDfa::from_regex(pattern)?.minimized();
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    if map.len() >= 256 {
        map.clear();
    }
    map.insert(pattern.to_string(), dfa.clone());
    Ok(dfa)
}

pub struct Vocabulary {
    tokens: Tokens,
    eos_id: u32,
    special: Vec<bool>,
    trie: OnceLock<(TokenTrie, f64)>,
    slice_patterns: Vec<String>,
    slice_dfas: Vec<ByteDfa>,
    prepared: OnceLock<(Arc<Prepared>, f64)>,
}

impl Vocabulary {
    /// `tokens[i]` is the text of token `i`. EOS and `special_ids` are never matched as
    /// text; EOS is allowed exactly where the text so far is a full match.
    pub fn new(tokens: &[&[u8]], eos_id: u32, special_ids: &[u32]) -> Result<Self, Error> {
        let json: Vec<String> = JSON_SLICES.iter().map(|s| s.to_string()).collect();
        Self::with_slices(tokens, eos_id, special_ids, &json)
    }

    /// As [`Vocabulary::new`], with the regexes cutting the tokens into slices (see
    /// the `walk::slices` module; at most 64). Each must compile: a bad one is reported here.
    pub fn with_slices(
        tokens: &[&[u8]],
        eos_id: u32,
        special_ids: &[u32],
        slices: &[String],
    ) -> Result<Self, Error> {
        if slices.len() > MAX_SLICES {
            return Err(Error::Option(format!(
                "{} slices, at most {MAX_SLICES}",
                slices.len()
            )));
        }
        let slice_dfas = slices
            .iter()
            .map(|p| slice_dfa(p))
            .collect::<Result<Vec<_>, _>>()?;
        let n = tokens.len();
        if (eos_id as usize) >= n {
            return Err(Error::Vocabulary(format!(
                "eos id {eos_id} is outside the {n} tokens"
            )));
        }
        let mut special = vec![false; n];
        for &id in special_ids {
            let slot = special.get_mut(id as usize).ok_or_else(|| {
                Error::Vocabulary(format!("special id {id} is outside the {n} tokens"))
            })?;
            *slot = true;
        }
        special[eos_id as usize] = true;
        let mut bytes = Vec::with_capacity(tokens.iter().map(|t| t.len()).sum());
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0u32);
        for t in tokens {
            bytes.extend_from_slice(t);
            offsets.push(bytes.len() as u32);
        }
        Ok(Vocabulary {
            tokens: Tokens {
                bytes: bytes.into(),
                offsets: offsets.into(),
            },
            eos_id,
            special,
            trie: OnceLock::new(),
            slice_patterns: slices.to_vec(),
            slice_dfas,
            prepared: OnceLock::new(),
        })
    }

    pub fn len(&self) -> usize {
        self.special.len()
    }

    pub fn is_empty(&self) -> bool {
        self.special.is_empty()
    }

    pub fn eos_id(&self) -> u32 {
        self.eos_id
    }

    #[inline]
    pub fn token(&self, id: u32) -> &[u8] {
        self.tokens.get(id)
    }

    /// A shared handle on the token texts.
    pub fn tokens(&self) -> Tokens {
        self.tokens.clone()
    }

    /// True for EOS and special ids: tokens that are never text.
    #[inline]
    pub fn is_special(&self, id: u32) -> bool {
        self.special[id as usize]
    }

    /// Ids of the tokens that are text (not special, not empty).
    pub fn text_ids(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len() as u32).filter(|&i| !self.is_special(i) && !self.token(i).is_empty())
    }

    /// Number of int32 words of a bitmask over this vocabulary.
    pub fn mask_words(&self) -> usize {
        self.len().div_ceil(32)
    }

    /// The token trie, built on first use and reused by every index.
    pub fn trie(&self) -> &TokenTrie {
        &self.trie_with_time().0
    }

    /// The trie and the seconds its construction took.
    pub fn trie_with_time(&self) -> &(TokenTrie, f64) {
        self.trie.get_or_init(|| {
            let t0 = Instant::now();
            let trie = TokenTrie::build(self.text_ids().collect(), |id| self.token(id));
            (trie, t0.elapsed().as_secs_f64())
        })
    }

    /// The walk tries and slices every lazy or exact index walks, built on first use.
    pub fn prepared(&self) -> Arc<Prepared> {
        self.prepared_with_time().0.clone()
    }

    /// The prepared tries and the seconds their construction took (the token trie's
    /// included, when this call built it).
    pub fn prepared_with_time(&self) -> &(Arc<Prepared>, f64) {
        self.prepared.get_or_init(|| {
            let t0 = Instant::now();
            let trie = self.trie();
            let prepared =
                Prepared::build(trie, self.len(), &self.slice_patterns, &self.slice_dfas);
            (Arc::new(prepared), t0.elapsed().as_secs_f64())
        })
    }

    pub fn slice_patterns(&self) -> &[String] {
        &self.slice_patterns
    }

    /// Bytes of the token texts, plus the tries once built.
    pub fn memory_bytes(&self) -> usize {
        self.tokens.bytes.len()
            + self.tokens.offsets.len() * 4
            + self.special.len()
            + self.trie.get().map_or(0, |t| t.0.memory_bytes())
            + self.prepared.get().map_or(0, |p| p.0.memory_bytes())
    }
}
