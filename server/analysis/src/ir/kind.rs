//! The kind of an op: the ops the analysis dispatches on (those of the `func`, `sdy`,
//! `stablehlo` and `chlo` dialects), and [`OpKind::Other`] for the rest. An op's kind is
//! computed once, when it is built or made ([`super::Op::kind`]), so passes compare a
//! small integer instead of a name; the traits Shardy and the printer group ops by
//! (elementwise, side effects, collectives, returns) are its methods, in one place.

use super::{Attr, Op};
use rustc_hash::FxHashMap;
use std::sync::OnceLock;

macro_rules! op_kinds {
    ($($variant:ident = $name:literal,)*) => {
        /// An op name of the `func`, `sdy`, `stablehlo` or `chlo` dialect, or `Other`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum OpKind {
            $($variant,)*
            /// Any other op (another dialect, or a name the dialects do not define).
            Other,
        }

        const ALL: &[(&str, OpKind)] = &[$(($name, OpKind::$variant),)*];

        impl OpKind {
            /// The full name (`stablehlo.add`); `None` for [`OpKind::Other`].
            pub fn name(self) -> Option<&'static str> {
                match self {
                    $(OpKind::$variant => Some($name),)*
                    OpKind::Other => None,
                }
            }
        }
    };
}

op_kinds! {
    ChloAsinAcosKernel = "chlo._asin_acos_kernel",
    ChloAcos = "chlo.acos",
    ChloAcosh = "chlo.acosh",
    ChloAsin = "chlo.asin",
    ChloAsinh = "chlo.asinh",
    ChloAtan = "chlo.atan",
    ChloAtanh = "chlo.atanh",
    ChloBesselI1e = "chlo.bessel_i1e",
    ChloBroadcastAdd = "chlo.broadcast_add",
    ChloBroadcastAnd = "chlo.broadcast_and",
    ChloBroadcastAtan2 = "chlo.broadcast_atan2",
    ChloBroadcastCompare = "chlo.broadcast_compare",
    ChloBroadcastComplex = "chlo.broadcast_complex",
    ChloBroadcastDivide = "chlo.broadcast_divide",
    ChloBroadcastMaximum = "chlo.broadcast_maximum",
    ChloBroadcastMinimum = "chlo.broadcast_minimum",
    ChloBroadcastMultiply = "chlo.broadcast_multiply",
    ChloBroadcastNextAfter = "chlo.broadcast_next_after",
    ChloBroadcastOr = "chlo.broadcast_or",
    ChloBroadcastPolygamma = "chlo.broadcast_polygamma",
    ChloBroadcastPower = "chlo.broadcast_power",
    ChloBroadcastRemainder = "chlo.broadcast_remainder",
    ChloBroadcastSelect = "chlo.broadcast_select",
    ChloBroadcastShiftLeft = "chlo.broadcast_shift_left",
    ChloBroadcastShiftRightArithmetic = "chlo.broadcast_shift_right_arithmetic",
    ChloBroadcastShiftRightLogical = "chlo.broadcast_shift_right_logical",
    ChloBroadcastSubtract = "chlo.broadcast_subtract",
    ChloBroadcastXor = "chlo.broadcast_xor",
    ChloBroadcastZeta = "chlo.broadcast_zeta",
    ChloConj = "chlo.conj",
    ChloConstant = "chlo.constant",
    ChloConstantLike = "chlo.constant_like",
    ChloCosh = "chlo.cosh",
    ChloDigamma = "chlo.digamma",
    ChloErf = "chlo.erf",
    ChloErfInv = "chlo.erf_inv",
    ChloErfc = "chlo.erfc",
    ChloIsInf = "chlo.is_inf",
    ChloIsNegInf = "chlo.is_neg_inf",
    ChloIsPosInf = "chlo.is_pos_inf",
    ChloLgamma = "chlo.lgamma",
    ChloMulhi = "chlo.mulhi",
    ChloNextAfter = "chlo.next_after",
    ChloPolygamma = "chlo.polygamma",
    ChloRaggedDot = "chlo.ragged_dot",
    ChloScan = "chlo.scan",
    ChloSinh = "chlo.sinh",
    ChloSquare = "chlo.square",
    ChloTan = "chlo.tan",
    ChloTopK = "chlo.top_k",
    ChloZeta = "chlo.zeta",
    FuncCall = "func.call",
    FuncCallIndirect = "func.call_indirect",
    FuncConstant = "func.constant",
    FuncFunc = "func.func",
    FuncReturn = "func.return",
    SdyAllGather = "sdy.all_gather",
    SdyAllReduce = "sdy.all_reduce",
    SdyAllSlice = "sdy.all_slice",
    SdyAllToAll = "sdy.all_to_all",
    SdyCollectivePermute = "sdy.collective_permute",
    SdyConstant = "sdy.constant",
    SdyDataFlowEdge = "sdy.data_flow_edge",
    SdyFuncDataFlowEdge = "sdy.func_data_flow_edge",
    SdyManualComputation = "sdy.manual_computation",
    SdyMesh = "sdy.mesh",
    SdyNamedComputation = "sdy.named_computation",
    SdyPropagationBarrier = "sdy.propagation_barrier",
    SdyReduceScatter = "sdy.reduce_scatter",
    SdyReplicatedToUnreduced = "sdy.replicated_to_unreduced",
    SdyReshard = "sdy.reshard",
    SdyReturn = "sdy.return",
    SdyShardedToUnreduced = "sdy.sharded_to_unreduced",
    SdyShardingConstraint = "sdy.sharding_constraint",
    SdyShardingGroup = "sdy.sharding_group",
    StablehloAbs = "stablehlo.abs",
    StablehloAdd = "stablehlo.add",
    StablehloAfterAll = "stablehlo.after_all",
    StablehloAllGather = "stablehlo.all_gather",
    StablehloAllReduce = "stablehlo.all_reduce",
    StablehloAllToAll = "stablehlo.all_to_all",
    StablehloAnd = "stablehlo.and",
    StablehloAsyncDone = "stablehlo.async_done",
    StablehloAsyncStart = "stablehlo.async_start",
    StablehloAtan2 = "stablehlo.atan2",
    StablehloBatchNormGrad = "stablehlo.batch_norm_grad",
    StablehloBatchNormInference = "stablehlo.batch_norm_inference",
    StablehloBatchNormTraining = "stablehlo.batch_norm_training",
    StablehloBitcastConvert = "stablehlo.bitcast_convert",
    StablehloBroadcast = "stablehlo.broadcast",
    StablehloBroadcastInDim = "stablehlo.broadcast_in_dim",
    StablehloCase = "stablehlo.case",
    StablehloCbrt = "stablehlo.cbrt",
    StablehloCeil = "stablehlo.ceil",
    StablehloCholesky = "stablehlo.cholesky",
    StablehloClamp = "stablehlo.clamp",
    StablehloCollectiveBroadcast = "stablehlo.collective_broadcast",
    StablehloCollectivePermute = "stablehlo.collective_permute",
    StablehloCompare = "stablehlo.compare",
    StablehloComplex = "stablehlo.complex",
    StablehloComposite = "stablehlo.composite",
    StablehloConcatenate = "stablehlo.concatenate",
    StablehloConstant = "stablehlo.constant",
    StablehloConvert = "stablehlo.convert",
    StablehloConvolution = "stablehlo.convolution",
    StablehloCosine = "stablehlo.cosine",
    StablehloCountLeadingZeros = "stablehlo.count_leading_zeros",
    StablehloCreateToken = "stablehlo.create_token",
    StablehloCustomCall = "stablehlo.custom_call",
    StablehloDivide = "stablehlo.divide",
    StablehloDot = "stablehlo.dot",
    StablehloDotGeneral = "stablehlo.dot_general",
    StablehloDynamicBroadcastInDim = "stablehlo.dynamic_broadcast_in_dim",
    StablehloDynamicConv = "stablehlo.dynamic_conv",
    StablehloDynamicGather = "stablehlo.dynamic_gather",
    StablehloDynamicIota = "stablehlo.dynamic_iota",
    StablehloDynamicPad = "stablehlo.dynamic_pad",
    StablehloDynamicReshape = "stablehlo.dynamic_reshape",
    StablehloDynamicSlice = "stablehlo.dynamic_slice",
    StablehloDynamicUpdateSlice = "stablehlo.dynamic_update_slice",
    StablehloEinsum = "stablehlo.einsum",
    StablehloExponential = "stablehlo.exponential",
    StablehloExponentialMinusOne = "stablehlo.exponential_minus_one",
    StablehloFft = "stablehlo.fft",
    StablehloFloor = "stablehlo.floor",
    StablehloGather = "stablehlo.gather",
    StablehloGetDimensionSize = "stablehlo.get_dimension_size",
    StablehloGetTupleElement = "stablehlo.get_tuple_element",
    StablehloIf = "stablehlo.if",
    StablehloImag = "stablehlo.imag",
    StablehloInfeed = "stablehlo.infeed",
    StablehloIota = "stablehlo.iota",
    StablehloIsFinite = "stablehlo.is_finite",
    StablehloLog = "stablehlo.log",
    StablehloLogPlusOne = "stablehlo.log_plus_one",
    StablehloLogistic = "stablehlo.logistic",
    StablehloMap = "stablehlo.map",
    StablehloMaximum = "stablehlo.maximum",
    StablehloMinimum = "stablehlo.minimum",
    StablehloMultiply = "stablehlo.multiply",
    StablehloNegate = "stablehlo.negate",
    StablehloNot = "stablehlo.not",
    StablehloOptimizationBarrier = "stablehlo.optimization_barrier",
    StablehloOr = "stablehlo.or",
    StablehloOutfeed = "stablehlo.outfeed",
    StablehloPad = "stablehlo.pad",
    StablehloPartitionId = "stablehlo.partition_id",
    StablehloPopcnt = "stablehlo.popcnt",
    StablehloPower = "stablehlo.power",
    StablehloReal = "stablehlo.real",
    StablehloRealDynamicSlice = "stablehlo.real_dynamic_slice",
    StablehloRecv = "stablehlo.recv",
    StablehloReduce = "stablehlo.reduce",
    StablehloReducePrecision = "stablehlo.reduce_precision",
    StablehloReduceScatter = "stablehlo.reduce_scatter",
    StablehloReduceWindow = "stablehlo.reduce_window",
    StablehloRemainder = "stablehlo.remainder",
    StablehloReplicaId = "stablehlo.replica_id",
    StablehloReshape = "stablehlo.reshape",
    StablehloReturn = "stablehlo.return",
    StablehloReverse = "stablehlo.reverse",
    StablehloRng = "stablehlo.rng",
    StablehloRngBitGenerator = "stablehlo.rng_bit_generator",
    StablehloRoundNearestAfz = "stablehlo.round_nearest_afz",
    StablehloRoundNearestEven = "stablehlo.round_nearest_even",
    StablehloRsqrt = "stablehlo.rsqrt",
    StablehloScatter = "stablehlo.scatter",
    StablehloSelect = "stablehlo.select",
    StablehloSelectAndScatter = "stablehlo.select_and_scatter",
    StablehloSend = "stablehlo.send",
    StablehloSetDimensionSize = "stablehlo.set_dimension_size",
    StablehloShiftLeft = "stablehlo.shift_left",
    StablehloShiftRightArithmetic = "stablehlo.shift_right_arithmetic",
    StablehloShiftRightLogical = "stablehlo.shift_right_logical",
    StablehloSign = "stablehlo.sign",
    StablehloSine = "stablehlo.sine",
    StablehloSlice = "stablehlo.slice",
    StablehloSort = "stablehlo.sort",
    StablehloSqrt = "stablehlo.sqrt",
    StablehloSubtract = "stablehlo.subtract",
    StablehloTan = "stablehlo.tan",
    StablehloTanh = "stablehlo.tanh",
    StablehloTorchIndexSelect = "stablehlo.torch_index_select",
    StablehloTranspose = "stablehlo.transpose",
    StablehloTriangularSolve = "stablehlo.triangular_solve",
    StablehloTuple = "stablehlo.tuple",
    StablehloUnaryEinsum = "stablehlo.unary_einsum",
    StablehloUniformDequantize = "stablehlo.uniform_dequantize",
    StablehloUniformQuantize = "stablehlo.uniform_quantize",
    StablehloWhile = "stablehlo.while",
    StablehloXor = "stablehlo.xor",
    StablehloCrossReplicaSum = "stablehlo.cross-replica-sum",
}

impl OpKind {
    /// The kind of the op named `name`.
    pub fn of(name: &str) -> OpKind {
        static BY_NAME: OnceLock<FxHashMap<&'static str, OpKind>> = OnceLock::new();
        let by_name = BY_NAME.get_or_init(|| ALL.iter().copied().collect());
        by_name.get(name).copied().unwrap_or(OpKind::Other)
    }

    /// Shardy's `isElementwise` by name (the StableHLO element-wise and broadcasting
    /// element-wise ops, and the sdy ops that pass their operand through); a
    /// `bitcast_convert` between equal types also is, which the name cannot tell.
    pub fn is_elementwise(self) -> bool {
        matches!(
            self,
            OpKind::StablehloAbs
                | OpKind::StablehloAdd
                | OpKind::StablehloAnd
                | OpKind::StablehloAtan2
                | OpKind::StablehloCbrt
                | OpKind::StablehloCeil
                | OpKind::StablehloComplex
                | OpKind::StablehloConvert
                | OpKind::StablehloCosine
                | OpKind::StablehloCountLeadingZeros
                | OpKind::StablehloDivide
                | OpKind::StablehloExponential
                | OpKind::StablehloExponentialMinusOne
                | OpKind::StablehloFloor
                | OpKind::StablehloImag
                | OpKind::StablehloIsFinite
                | OpKind::StablehloLog
                | OpKind::StablehloLogPlusOne
                | OpKind::StablehloLogistic
                | OpKind::StablehloMaximum
                | OpKind::StablehloMinimum
                | OpKind::StablehloMultiply
                | OpKind::StablehloNegate
                | OpKind::StablehloNot
                | OpKind::StablehloOr
                | OpKind::StablehloPopcnt
                | OpKind::StablehloPower
                | OpKind::StablehloReal
                | OpKind::StablehloRemainder
                | OpKind::StablehloRoundNearestAfz
                | OpKind::StablehloRoundNearestEven
                | OpKind::StablehloRsqrt
                | OpKind::StablehloShiftLeft
                | OpKind::StablehloShiftRightArithmetic
                | OpKind::StablehloShiftRightLogical
                | OpKind::StablehloSign
                | OpKind::StablehloSine
                | OpKind::StablehloSqrt
                | OpKind::StablehloSubtract
                | OpKind::StablehloTan
                | OpKind::StablehloTanh
                | OpKind::StablehloXor
                | OpKind::StablehloUniformQuantize
                | OpKind::StablehloUniformDequantize
                | OpKind::StablehloCompare
                | OpKind::StablehloReducePrecision
                | OpKind::StablehloSelect
                | OpKind::StablehloClamp
                | OpKind::SdyPropagationBarrier
                | OpKind::SdyShardingConstraint
                | OpKind::SdyReshard
        )
    }

    /// The StableHLO ops MLIR prints as `name %a, %b {attrs} : T`
    /// (`custom<SameOperandsAndResultType>`).
    pub fn has_elementwise_form(self) -> bool {
        matches!(
            self,
            OpKind::StablehloAbs
                | OpKind::StablehloAdd
                | OpKind::StablehloAnd
                | OpKind::StablehloAtan2
                | OpKind::StablehloCbrt
                | OpKind::StablehloCeil
                | OpKind::StablehloComplex
                | OpKind::StablehloConvert
                | OpKind::StablehloCosine
                | OpKind::StablehloCountLeadingZeros
                | OpKind::StablehloDivide
                | OpKind::StablehloExponential
                | OpKind::StablehloImag
                | OpKind::StablehloIsFinite
                | OpKind::StablehloReal
                | OpKind::StablehloUniformQuantize
                | OpKind::StablehloUniformDequantize
                | OpKind::StablehloExponentialMinusOne
                | OpKind::StablehloFloor
                | OpKind::StablehloLog
                | OpKind::StablehloLogPlusOne
                | OpKind::StablehloLogistic
                | OpKind::StablehloMaximum
                | OpKind::StablehloMinimum
                | OpKind::StablehloMultiply
                | OpKind::StablehloNegate
                | OpKind::StablehloNot
                | OpKind::StablehloOr
                | OpKind::StablehloPopcnt
                | OpKind::StablehloPower
                | OpKind::StablehloRemainder
                | OpKind::StablehloRoundNearestAfz
                | OpKind::StablehloRoundNearestEven
                | OpKind::StablehloRsqrt
                | OpKind::StablehloShiftLeft
                | OpKind::StablehloShiftRightArithmetic
                | OpKind::StablehloShiftRightLogical
                | OpKind::StablehloSign
                | OpKind::StablehloSine
                | OpKind::StablehloSqrt
                | OpKind::StablehloSubtract
                | OpKind::StablehloTan
                | OpKind::StablehloTanh
                | OpKind::StablehloXor
        )
    }

    /// The unary elementwise CHLO ops (`chlo.square %x : T -> R`).
    pub fn is_chlo_unary(self) -> bool {
        matches!(
            self,
            OpKind::ChloAsinAcosKernel
                | OpKind::ChloAcos
                | OpKind::ChloAcosh
                | OpKind::ChloAsin
                | OpKind::ChloAsinh
                | OpKind::ChloAtan
                | OpKind::ChloAtanh
                | OpKind::ChloBesselI1e
                | OpKind::ChloConj
                | OpKind::ChloCosh
                | OpKind::ChloSinh
                | OpKind::ChloTan
                | OpKind::ChloDigamma
                | OpKind::ChloErf
                | OpKind::ChloErfInv
                | OpKind::ChloErfc
                | OpKind::ChloIsInf
                | OpKind::ChloIsNegInf
                | OpKind::ChloIsPosInf
                | OpKind::ChloLgamma
                | OpKind::ChloSquare
        )
    }

    /// Whether the op has no memory effects by itself: `Some(false)`; `Some(true)` when
    /// its effects are those of its nested ops (recursive); `None` when it has effects
    /// (or is not known to have none).
    pub fn purity(self) -> Option<bool> {
        // The StableHLO element-wise ops, and `sdy.reshard`/`sdy.propagation_barrier`.
        if self.is_elementwise() && self != OpKind::SdyShardingConstraint {
            return Some(false);
        }
        match self {
            OpKind::StablehloConstant
            | OpKind::StablehloIota
            | OpKind::StablehloCreateToken
            | OpKind::StablehloReplicaId
            | OpKind::StablehloPartitionId
            | OpKind::StablehloAfterAll
            | OpKind::StablehloGetTupleElement
            | OpKind::StablehloTuple
            | OpKind::StablehloSlice
            | OpKind::StablehloDynamicSlice
            | OpKind::StablehloDynamicUpdateSlice
            | OpKind::StablehloBatchNormGrad
            | OpKind::StablehloBatchNormInference
            | OpKind::StablehloBatchNormTraining
            | OpKind::StablehloBitcastConvert
            | OpKind::StablehloBroadcast
            | OpKind::StablehloBroadcastInDim
            | OpKind::StablehloCholesky
            | OpKind::StablehloConcatenate
            | OpKind::StablehloCrossReplicaSum
            | OpKind::StablehloConvolution
            | OpKind::StablehloDot
            | OpKind::StablehloDotGeneral
            | OpKind::StablehloEinsum
            | OpKind::StablehloUnaryEinsum
            | OpKind::StablehloFft
            | OpKind::StablehloGather
            | OpKind::StablehloGetDimensionSize
            | OpKind::StablehloReshape
            | OpKind::StablehloSetDimensionSize
            | OpKind::StablehloReverse
            | OpKind::StablehloPad
            | OpKind::StablehloTranspose
            | OpKind::StablehloTriangularSolve
            | OpKind::StablehloTorchIndexSelect
            | OpKind::StablehloOptimizationBarrier
            | OpKind::StablehloRealDynamicSlice
            | OpKind::StablehloDynamicPad
            | OpKind::StablehloDynamicIota
            | OpKind::StablehloDynamicBroadcastInDim
            | OpKind::StablehloDynamicConv
            | OpKind::StablehloRngBitGenerator
            | OpKind::StablehloDynamicReshape
            | OpKind::StablehloDynamicGather
            | OpKind::StablehloReturn
            | OpKind::SdyReshard
            | OpKind::SdyPropagationBarrier
            | OpKind::SdyConstant
            | OpKind::SdyReturn
            | OpKind::FuncReturn => Some(false),
            OpKind::StablehloIf
            | OpKind::StablehloCase
            | OpKind::StablehloWhile
            | OpKind::StablehloReduce
            | OpKind::StablehloMap
            | OpKind::StablehloScatter
            | OpKind::StablehloSelectAndScatter
            | OpKind::StablehloSort
            | OpKind::StablehloReduceWindow
            | OpKind::SdyManualComputation
            | OpKind::SdyNamedComputation => Some(true),
            _ => None,
        }
    }

    /// The sdy collectives (`sdy.all_gather`, ..., `sdy.collective_permute`); their
    /// sharding is the `out_sharding` property.
    pub fn is_collective(self) -> bool {
        matches!(
            self,
            OpKind::SdyAllGather
                | OpKind::SdyAllSlice
                | OpKind::SdyReduceScatter
                | OpKind::SdyShardedToUnreduced
                | OpKind::SdyAllReduce
                | OpKind::SdyReplicatedToUnreduced
                | OpKind::SdyAllToAll
                | OpKind::SdyCollectivePermute
        )
    }

    /// The property holding a collective's axes (`""` for other ops).
    pub fn collective_axes_key(self) -> &'static str {
        match self {
            OpKind::SdyAllGather => "gathering_axes",
            OpKind::SdyAllSlice => "slicing_axes",
            OpKind::SdyReduceScatter => "reduce_scatter_axes",
            OpKind::SdyShardedToUnreduced => "axes",
            OpKind::SdyAllReduce => "reduction_axes",
            OpKind::SdyReplicatedToUnreduced => "axes",
            _ => "",
        }
    }

    /// The data-flow ops (`ShardableDataFlowOpInterface`): their operands flow to their
    /// results or region arguments (`sdy.data_flow_edge` owners).
    pub fn is_data_flow_op(self) -> bool {
        matches!(
            self,
            OpKind::StablehloWhile
                | OpKind::StablehloCase
                | OpKind::StablehloOptimizationBarrier
                | OpKind::SdyNamedComputation
                | OpKind::SdyManualComputation
        )
    }

    /// The terminators that return a region's or function's values.
    pub fn is_return(self) -> bool {
        matches!(self, OpKind::FuncReturn | OpKind::SdyReturn | OpKind::StablehloReturn)
    }

    /// The binary commutative ops a `stablehlo.reduce` prints compactly (`applies NAME`).
    pub fn is_compact_reducer(self) -> bool {
        matches!(
            self,
            OpKind::StablehloAdd
                | OpKind::StablehloMultiply
                | OpKind::StablehloMaximum
                | OpKind::StablehloMinimum
                | OpKind::StablehloAnd
                | OpKind::StablehloOr
                | OpKind::StablehloXor
        )
    }

    pub fn is_stablehlo(self) -> bool {
        self.name().is_some_and(|n| n.starts_with("stablehlo."))
    }
    pub fn is_sdy(self) -> bool {
        self.name().is_some_and(|n| n.starts_with("sdy."))
    }
}

/// [`OpKind::purity`] of this op: a `stablehlo.custom_call` is effect-free unless it says
/// `has_side_effect = true` (its effects depend on the attribute, not the name).
pub fn op_purity(op: &Op) -> Option<bool> {
    if op.kind != OpKind::StablehloCustomCall {
        return op.kind.purity();
    }
    match op.prop("has_side_effect").or_else(|| op.attr("has_side_effect")) {
        Some(Attr::Bool(true)) | Some(Attr::Unit) => None,
        Some(Attr::Int { value, .. }) if *value != 0 => None,
        _ => Some(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &(name, kind) in ALL {
            assert_eq!(OpKind::of(name), kind);
            assert_eq!(kind.name(), Some(name));
        }
        assert_eq!(OpKind::of("stablehlo.foo"), OpKind::Other);
        assert_eq!(OpKind::of("mhlo.add"), OpKind::Other);
        assert!(
            OpKind::StablehloAdd.is_elementwise() && OpKind::StablehloAdd.has_elementwise_form()
        );
        assert!(
            OpKind::StablehloSelect.is_elementwise()
                && !OpKind::StablehloSelect.has_elementwise_form()
        );
        assert_eq!(OpKind::StablehloWhile.purity(), Some(true));
        assert_eq!(OpKind::StablehloCustomCall.purity(), None);
    }
}
