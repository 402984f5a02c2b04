//! `sdy.sharding_constraint` and `sdy.reshard` (symbol-use time): the sharding fits the
//! value (§3), and the unreduced axes change only as §6 allows.

use super::attrs::inherent_sharding;
use super::sharding::{verify_sharding, TypeArg};
use super::unreduced::verify_transition;
use super::values::sharding_through_barriers;
use super::{Ctx, Violation};
use crate::model::OpId;
use sdy_syntax::sdy::Reduction;

pub fn verify(cx: &Ctx, id: OpId) -> Result<(), Violation> {
    let Some(sharding) = inherent_sharding(cx.model, id, "sharding") else { return Ok(()) };
    verify_sharding(cx.model, &sharding, TypeArg::from(cx.model.result_type(id, 0)), id)?;
    let input = cx.model.op(id).operands.first().copied().flatten();
    let Some(source) = input.and_then(|v| sharding_through_barriers(cx.model, v)) else {
        return Ok(());
    };
    verify_transition(cx, Some(&source), &sharding, Some(Reduction::Sum), Some(source.reduction))
}
