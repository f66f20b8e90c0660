//! `oneOf` as the reader meets it, with recursion cut inside its branches.
//!
//! A branch cut at the recursion bound admits fewer values than it should, and
//! `oneOf` excludes what other branches admit: a smaller branch excludes too little,
//! so its cut could let in values the full branch would have excluded. Two readings
//! keep the result inside `oneOf`:
//! - where no value is in two branches at all, `oneOf` is their union, and cutting
//!   them only drops instances deeper than the bound, as everywhere else;
//! - otherwise each cut branch is met with the complements of the others' *widened*
//!   readings, whose cuts admit everything. A complement of a wider branch is
//!   narrower, so the result stays inside `oneOf`; it misses only values the widening
//!   added, which reach a cut, so are nested at least the bound deep. A *shallow* cut
//!   ([`super::refs`]), whose cycle carries no members, would miss shallow values too:
//!   there `oneOf` is refused.
//!
//! The widened reading reads the branches again, each cut admitting everything and
//! each nested `oneOf` read as `anyOf` (both only widen; a cut under `not` or `if`
//! still refuses), with a cache of its own. Disjointness of the wide branches shows
//! the real ones disjoint. A reference cycle is expanded anew wherever it is reached,
//! so its `oneOf`s are met again and again; a widened reading depends on where only
//! through the expansions around it ([`Reader::surroundings`]), so one is read per
//! pointer and surroundings and reused (a MaskBench schema reaching its `oneOf` 512
//! times does so in 17 surroundings), and the complements of its branches, built once
//! per shape ([`crate::shapes::negate`]), let the meets with them be found again. At
//! most [`MAX_WIDENINGS`] readings and [`MAX_ENCOUNTERS`] encounters per schema keep a
//! refusal about as cheap as a success.

use std::collections::HashMap;

use serde_json::Value;

use super::{child, fail_at, union, Reader};
use crate::context::{Ctx, Fail};
use crate::error::SchemaError;
use crate::shapes::exclusive::{first_overlap, one_of, within_complements};
use crate::shapes::merge::intersect;
use crate::shapes::shape::ShapeRef;

/// The most widened readings of `oneOf` branches per schema.
pub const MAX_WIDENINGS: usize = 512;

/// The most times per schema a `oneOf` with a cut branch is reached.
pub const MAX_ENCOUNTERS: usize = 2048;

/// Widened readings by the `oneOf`'s pointer and [`Reader::surroundings`], each with
/// whether a cut in it was shallow.
pub type Widened = HashMap<(String, Vec<(String, usize, usize)>), (Vec<ShapeRef>, bool)>;

impl Reader<'_> {
    /// `acc` (the object's other keywords, at `ptr`) met with its `oneOf` `v`: the
    /// values of `acc` in exactly one branch, which are those in exactly one branch met
    /// with `acc` (meeting first lets siblings, a `required` tag or a `type`, make
    /// branches disjoint that are not on their own). With a cut in a branch, as the
    /// module says.
    pub(super) fn one_of(
        &mut self,
        ctx: &mut Ctx,
        acc: ShapeRef,
        v: &Value,
        ptr: &str,
    ) -> Result<ShapeRef, SchemaError> {
        let siblings_cut = self.cut.any;
        let before = std::mem::take(&mut self.cut);
        let mut branches = self.branches(ctx, v, ptr, "oneOf")?;
        let cut = self.cut.any;
        self.cut |= before;
        if self.over {
            let u = union(ctx, &branches, ptr)?;
            return intersect(ctx, &acc, &u).map_err(|f| fail_at(ptr, f));
        }
        let raw = branches.clone();
        for b in branches.iter_mut() {
            *b = intersect(ctx, &acc, b).map_err(|f| fail_at(ptr, f))?;
        }
        let at = child(ptr, "oneOf");
        if !cut {
            return one_of(ctx, &branches, &raw).map_err(|f| fail_at(&at, f));
        }
        let (mut wide, shallow) = self.widened(ctx, v, ptr)?;
        if !siblings_cut {
            // `acc` is exact, so meeting it keeps the branches widened
            for b in wide.iter_mut() {
                *b = intersect(ctx, &acc, b).map_err(|f| fail_at(ptr, f))?;
            }
        }
        let Some((i, j)) = first_overlap(ctx, &wide).map_err(|f| fail_at(&at, f))? else {
            return union(ctx, &branches, ptr);
        };
        let why = format!(
            "a recursive $ref under `oneOf` whose branches {i} and {j} may overlap \
             would need unbounded depth"
        );
        if shallow {
            let cycle = "a reference cycle without properties or items in it";
            return Err(SchemaError::limit(&at, format!("{why} ({cycle})")));
        }
        let only = within_complements(ctx, &branches, &wide).map_err(|f| match f {
            Fail::Limit(what) => SchemaError::limit(&at, format!("{why}: {what}")),
            Fail::Unsupported {
                keyword, reason, ..
            } => SchemaError::limit(&at, format!("{why}, and for {keyword}: {reason}")),
        })?;
        ctx.shape(only).map_err(|f| fail_at(&at, f))
    }

    /// The branches of `oneOf` `v` at `ptr`, widened, and whether a cut in them was
    /// shallow. A reading depends on where `ptr` is reached only through the
    /// expansions around it ([`Reader::surroundings`]), so one is kept per pointer and
    /// surroundings: a reference cycle reaches the same `oneOf` many times in few
    /// surroundings. Each encounter and each new reading counts against its bound.
    fn widened(
        &mut self,
        ctx: &mut Ctx,
        v: &Value,
        ptr: &str,
    ) -> Result<(Vec<ShapeRef>, bool), SchemaError> {
        let key = (
            ptr.to_string(),
            self.surroundings(ctx.dialect.max_recursion as usize),
        );
        self.encounters += 1;
        if self.encounters > MAX_ENCOUNTERS {
            return Err(SchemaError::limit(
                &child(ptr, "oneOf"),
                format!(
                    "a recursive $ref reaching `oneOf` more than {MAX_ENCOUNTERS} times \
                     would need unbounded depth"
                ),
            ));
        }
        if let Some(hit) = self.widened.get(&key) {
            return Ok(hit.clone());
        }
        self.widenings += 1;
        if self.widenings > MAX_WIDENINGS {
            return Err(SchemaError::limit(
                &child(ptr, "oneOf"),
                format!(
                    "a recursive $ref under `oneOf` in more than {MAX_WIDENINGS} \
                     surroundings would need unbounded depth"
                ),
            ));
        }
        let over = std::mem::replace(&mut self.over, true);
        let cut = std::mem::take(&mut self.cut);
        let r = self.branches(ctx, v, ptr, "oneOf");
        let shallow = self.cut.shallow;
        self.over = over;
        self.cut = cut;
        let read = (r?, shallow);
        self.widened.insert(key, read.clone());
        Ok(read)
    }

    /// What a reading here depends on from the expansions around it: for each target
    /// being expanded, how many times it is (where it is cut) and how many member levels
    /// lie between its first expansion and here, up to the bound (a cut of it is shallow
    /// below fewer), in the order of the targets.
    fn surroundings(&self, bound: usize) -> Vec<(String, usize, usize)> {
        let mut around: Vec<(String, usize, usize)> = Vec::new();
        for (target, level) in &self.stack {
            match around.iter_mut().find(|a| &a.0 == target) {
                Some(a) => a.1 += 1,
                None => {
                    let below = self.members.saturating_sub(*level).min(bound);
                    around.push((target.clone(), 1, below));
                }
            }
        }
        around.sort();
        around
    }
}
