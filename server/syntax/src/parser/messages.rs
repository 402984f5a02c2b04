//! Every message the parser reports, worded once: MLIR's and Shardy's words, byte for
//! byte; callers fill in the blanks. `expected <token>` errors (MLIR's `parseToken`) are
//! built by `Parser::error_expected` and its kin from the token they name.

/// Defines each message as a `&str` constant.
macro_rules! texts {
    ($($name:ident = $text:literal,)*) => { $(pub const $name: &str = $text;)* };
}

/// Defines each message with blanks as a function of them.
macro_rules! formats {
    ($($name:ident($($arg:ident),*) = $text:literal,)*) => {
        $(pub fn $name($($arg: impl std::fmt::Display),*) -> String { format!($text) })*
    };
}

texts! {
    UNTERMINATED_STRING = "expected '\"' in string literal",
    UNEXPECTED_CHARACTER = "unexpected character",
    NESTING_TOO_DEEP = "nesting is too deep",
    BRACE_AT_TOP_LEVEL = "unexpected '}' at top level",
    UNCLOSED_REGION = "expected '}' to close the region",
    OP_NAME_IN_QUOTES = "expected operation name in quotes",
    EXPECTED_GREATER = "expected '>'",
    DIM_LIST_X = "expected 'x' in dimension list",
    NON_FUNCTION_TYPE = "expected non-function type",
    EXPECTED_DEVICE_IDS = "expected 'device_ids'",
    INVALID_ATTRIBUTE_KIND = "invalid kind of attribute specified",
    EXPECTED_CUSTOM = "expected 'custom'",
    EXPECTED_KEYWORD = "expected valid keyword",
    EXPECTED_STRING = "expected string",
    EXPECTED_INTEGER = "expected integer value",
    INTEGER_TOO_LARGE = "integer value too large",
    EXPECTED_SYMBOL_NAME = "expected valid '@'-identifier for symbol name",
    EXPECTED_KEYWORD_OR_STRING = "expected valid keyword or string",
    PRECISION_VALUES = "expected ::mlir::stablehlo::Precision to be one of: DEFAULT, HIGH, HIGHEST",
    EXPECTED_PRECISION = "expected 'precision'",
    EXPECTED_INIT = "expected 'init'",
    EXPECTED_X = "expected 'x'",
    EXPECTED_CONTRACTING_DIMS = "expected 'contracting_dims'",
    ELEMENT_LITERAL = "expected element literal of primitive type",
    FLOAT_LITERAL = "expected floating point literal",
    BOOL_LITERAL = "expected i1 type for 'true' or 'false' values",
    INTEGER_OUT_OF_RANGE = "integer constant out of range for type",
    NEGATIVE_UNSIGNED = "expected unsigned integer elements, but parsed negative value",
    FLOAT_FOR_INTEGER = "expected integer elements, but parsed floating-point",
    DECIMAL_FOR_FLOAT = "unexpected decimal integer literal for a floating point value",
    HEX_FLOAT_OUT_OF_RANGE = "hexadecimal float constant out of range for type",
}

formats! {
    custom_op(op, message) = "custom op '{op}' {message}",
    unexpected_character(t) = "unexpected character '{t}'",
    unexpected(t) = "unexpected '{t}'",
    not_a_function_type(t) = "invalid kind of type specified: expected builtin.function, but found '{t}'",
    zero_elements(ty) = "parsed zero elements, but type ('{ty}') expected at least 1",
    attribute_reference(text) = "attribute references are not supported here: {text}",
    priority_format(text) = "expecting priority in format 'p<number>', got: {text}",
    priority_leading_zeros(text) = "priorities with leading zeros are not allowed, got: {text}",
    priority_integer(text) = "expecting integer priority, got: {text}",
    factor_symbol_range(c) = "expecting symbol from 'i' to 'z'. Received: '{c}'",
    factor_after_z(s) = "expecting integer after 'z_'. Received: '{s}'",
    factor_leading_zeros(n) = "expecting positive integer without leading zeros. Received: '{n}'",
    factor_index_too_large(n) = "expecting symbol index <=2^63-1. Received: '{n}'",
    factor_order(expected, received) = "expecting factor indices to be ordered like an iota ([0,1,2,...], e.g. {{i=#, j=#, ...}}). Expecting factor index symbol '{expected}', received: '{received}'",
    single_factor_symbol(rest) = "expecting single factor symbol: {rest}",
}

// Chain lines, in the words of Shardy's generated parsers.
texts! {
    MESH_AXES = "failed to parse Sdy_Mesh parameter 'axes' which is to be a `::llvm::ArrayRef<MeshAxisAttr>`",
    MESH_DEVICE_IDS = "failed to parse Sdy_Mesh parameter 'device_ids' which is to be a `::llvm::ArrayRef<int64_t>`",
    MESH_AXIS_NAME = "failed to parse Sdy_MeshAxis parameter 'name' which is to be a `::llvm::StringRef`",
    MESH_AXIS_SIZE = "failed to parse Sdy_MeshAxis parameter 'size' which is to be a `int64_t`",
    MESH_ATTR = "failed to parse MeshAttr",
    MESH_OR_REF = "expecting MeshAttr or FlatSymbolRefAttr, got: <<NULL ATTRIBUTE>>",
    AXIS_REF_NAME = "failed to parse Sdy_AxisRef parameter 'name' which is to be a `::llvm::StringRef`",
    AXIS_REF_SUB = "failed to parse Sdy_AxisRef parameter 'sub_axis_info' which is to be a `SubAxisInfoAttr`",
    SUB_PRE_SIZE = "failed to parse Sdy_SubAxisInfo parameter 'pre_size' which is to be a `int64_t`",
    SUB_SIZE = "failed to parse Sdy_SubAxisInfo parameter 'size' which is to be a `int64_t`",
    DIM_SHARDINGS = "failed to parse Sdy_TensorSharding parameter 'dim_shardings' which is to be a `::llvm::ArrayRef<DimensionShardingAttr>`",
    REPLICATED = "failed to parse Sdy_TensorSharding parameter 'replicated_axes'",
    UNREDUCED = "failed to parse Sdy_TensorSharding parameter 'unreduced_axes'",
    AXIS_LIST = "failed to parse axis list which is expected to be an `ArrayRef<AxisRefAttr>`",
    AFTER_COMMA = "failed to parse Sdy_TensorSharding, expected valid named axis list after comma",
    PER_VALUE = "failed to parse Sdy_TensorShardingPerValue parameter 'shardings' which is to be a `::llvm::ArrayRef<TensorShardingAttr>`",
    OPERAND_MAPPINGS = "failed to parse Sdy_OpShardingRule parameter 'operand_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`",
    RESULT_MAPPINGS = "failed to parse Sdy_OpShardingRule parameter 'result_mappings' which is to be a `::llvm::ArrayRef<TensorMappingAttr>`",
    DIM_MAPPINGS = "failed to parse Sdy_TensorMapping parameter 'dim_mappings' which is to be a `::llvm::ArrayRef<DimMappingAttr>`",
    MANUAL_AXES = "failed to parse Sdy_ManualAxes parameter 'value' which is to be a `::llvm::ArrayRef<StringAttr>`",
    AXIS_REF_LIST = "failed to parse Sdy_AxisRefList parameter 'value' which is to be a `::llvm::ArrayRef<AxisRefAttr>`",
    LIST_OF_AXIS_REF_LISTS = "failed to parse Sdy_ListOfAxisRefLists parameter 'value' which is to be a `::llvm::ArrayRef<AxisRefListAttr>`",
    A2A_AXES = "failed to parse Sdy_AllToAllParamAttr parameter 'axes' which is to be a `::llvm::ArrayRef<AxisRefAttr>`",
    A2A_SRC = "failed to parse Sdy_AllToAllParamAttr parameter 'src_dim' which is to be a `int64_t`",
    A2A_TGT = "failed to parse Sdy_AllToAllParamAttr parameter 'tgt_dim' which is to be a `int64_t`",
    A2A_LIST = "failed to parse Sdy_AllToAllParamList parameter 'value' which is to be a `::llvm::ArrayRef<AllToAllParamAttr>`",
}
