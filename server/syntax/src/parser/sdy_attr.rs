//! Parsers of the sdy attribute bodies, with Shardy's exact error messages and
//! "failed to parse ..." chains. (Being written.)

use super::Parser;
use crate::sdy::*;

impl Parser<'_> {
    /// At `<` after `#sdy.mesh` or `sdy.mesh @m =`: `<["a"=2], device_ids=[...]>`.
    pub(crate) fn sdy_mesh_body(&mut self) -> Option<MeshAst> {
        let _ = self;
        None
    }
    /// At `<`: the sharding body `<@m, [{"a"}, {?}], replicated={"b"}>`.
    pub(crate) fn sdy_sharding_body(&mut self) -> Option<ShardingAst> {
        None
    }
    /// At `<` after `#sdy.sharding_per_value`: `<[<...>, <...>]>`.
    pub(crate) fn sdy_per_value_body(&mut self) -> Option<PerValueAst> {
        None
    }
    /// At `[`: the op-syntax per-value list `[<...>, <...>]` (in/out_shardings=).
    pub(crate) fn sdy_stripped_per_value(&mut self) -> Option<PerValueAst> {
        None
    }
    /// At `<` after `#sdy.op_sharding_rule`.
    pub(crate) fn sdy_rule_body(&mut self) -> Option<RuleAst> {
        None
    }
    /// At `{`: manual axes `{"a", "b"}`.
    pub(crate) fn sdy_manual_axes(&mut self) -> Option<Vec<AxisRefAst>> {
        None
    }
    /// At `{`: an axis-ref list `{"y", "x":(1)2}` (may be empty).
    pub(crate) fn sdy_axis_list(&mut self) -> Option<Vec<AxisRefAst>> {
        None
    }
    /// At `[`: per-dimension axis lists `[{}, {"x"}]`.
    pub(crate) fn sdy_axis_list_per_dim(&mut self) -> Option<Vec<AxisListAst>> {
        None
    }
    /// At `[`: all-to-all params `[{"x"}: 0->2, {"y"}: 1->3]`.
    pub(crate) fn sdy_all_to_all_params(&mut self) -> Option<Vec<AllToAllParamAst>> {
        None
    }
}
