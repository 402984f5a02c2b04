//! Floating-point literals printed the way MLIR prints them (`printFloatValue` over
//! LLVM's `APFloat::toString`): `1.000000e+00` when six significant digits round-trip,
//! otherwise the shortest "natural precision" form (`3.14159265358979`), and hex
//! (`0x7FC00000`) for infinities and NaNs.

/// An IEEE binary format: total significand bits (with the implicit bit) and exponent
/// field width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloatSem {
    pub precision: u32,
    pub exp_bits: u32,
}

impl FloatSem {
    pub const F64: FloatSem = FloatSem { precision: 53, exp_bits: 11 };
    pub const F32: FloatSem = FloatSem { precision: 24, exp_bits: 8 };
    pub const F16: FloatSem = FloatSem { precision: 11, exp_bits: 5 };
    pub const BF16: FloatSem = FloatSem { precision: 8, exp_bits: 8 };
    pub const TF32: FloatSem = FloatSem { precision: 11, exp_bits: 8 };

    /// The semantics of a builtin float type name.
    pub fn of_type(name: &str) -> Option<FloatSem> {
        Some(match name {
            "f64" => FloatSem::F64,
            "f32" => FloatSem::F32,
            "f16" => FloatSem::F16,
            "bf16" => FloatSem::BF16,
            "tf32" => FloatSem::TF32,
            _ => return None,
        })
    }
    fn width(self) -> u32 {
        self.precision + self.exp_bits // sign bit included: (precision - 1) + exp + 1
    }
    fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }
    fn mant_bits(self) -> u32 {
        self.precision - 1
    }
}

/// Reads a decimal float literal (`1.5`, `-2.0e-3`, `7`) as the nearest value of `sem`,
/// returned as raw bits.
pub fn parse_decimal(text: &str, sem: FloatSem) -> Option<u64> {
    let t = text.trim();
    if sem == FloatSem::F64 {
        return t.parse::<f64>().ok().map(f64::to_bits);
    }
    if sem == FloatSem::F32 {
        return t.parse::<f32>().ok().map(|f| f.to_bits() as u64);
    }
    let v: f64 = t.parse().ok()?;
    Some(round_f64_to(v, sem))
}

/// Rounds an f64 to a narrower format (round to nearest, ties to even).
fn round_f64_to(v: f64, sem: FloatSem) -> u64 {
    let bits = v.to_bits();
    let sign = bits >> 63;
    let out_sign = sign << (sem.width() - 1);
    let exp_max = (1u64 << sem.exp_bits) - 1;
    if v.is_nan() {
        return out_sign | (exp_max << sem.mant_bits()) | (1 << (sem.mant_bits() - 1));
    }
    if v.is_infinite() {
        return out_sign | (exp_max << sem.mant_bits());
    }
    if v == 0.0 {
        return out_sign;
    }
    // Exact value: m * 2^e with m a 53-bit integer.
    let e_field = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if e_field == 0 { (frac, -1074) } else { (frac | (1 << 52), e_field - 1075) };
    // Position of the leading bit.
    let lead = 63 - m.leading_zeros() as i32 + e; // value in [2^lead, 2^(lead+1))
    let bias = sem.bias();
    let min_exp = 1 - bias;
    // Exponent of the least significant kept bit.
    let lsb = if lead >= min_exp {
        lead - sem.mant_bits() as i32
    } else {
        min_exp - sem.mant_bits() as i32
    };
    let shift = lsb - e; // bits of m to drop
    let (mut q, round_up) = if shift <= 0 {
        (m << (-shift) as u32, false)
    } else if shift >= 64 {
        (0, false)
    } else {
        let q = m >> shift;
        let rem = m & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        (q, rem > half || (rem == half && q & 1 == 1))
    };
    if round_up {
        q += 1;
    }
    // q is the significand at exponent lsb; renormalise.
    let mut lsb = lsb;
    if q >> sem.precision != 0 {
        q >>= 1;
        lsb += 1;
    }
    if q == 0 {
        return out_sign;
    }
    let lead = 63 - q.leading_zeros() as i32 + lsb;
    if lead > bias {
        return out_sign | (exp_max << sem.mant_bits());
    }
    if q >> sem.mant_bits() == 0 {
        // Subnormal.
        return out_sign | q;
    }
    let field = (lead + bias) as u64;
    out_sign | (field << sem.mant_bits()) | (q & ((1u64 << sem.mant_bits()) - 1))
}

/// Prints a float of format `sem` given by its raw bits, exactly as MLIR prints it.
pub fn format_float(bits: u64, sem: FloatSem) -> String {
    let d = decode(bits, sem);
    match d {
        Decoded::Special => hex(bits, sem),
        _ => {
            let s = to_string(&d, 6, 0, false);
            if parse_decimal(&s, sem) == Some(bits) {
                return s;
            }
            let s = to_string(&d, 0, 3, true);
            if s.contains('.') {
                return s;
            }
            hex(bits, sem)
        }
    }
}

fn hex(bits: u64, sem: FloatSem) -> String {
    let mask = if sem.width() >= 64 { u64::MAX } else { (1u64 << sem.width()) - 1 };
    format!("0x{:X}", bits & mask)
}

enum Decoded {
    Special,
    Zero { neg: bool },
    Normal { neg: bool, exp: i32, sig: u64, precision: u32 },
}

fn decode(bits: u64, sem: FloatSem) -> Decoded {
    let mant_bits = sem.mant_bits();
    let neg = (bits >> (sem.width() - 1)) & 1 == 1;
    let e_field = ((bits >> mant_bits) & ((1u64 << sem.exp_bits) - 1)) as i32;
    let frac = bits & ((1u64 << mant_bits) - 1);
    if e_field == (1 << sem.exp_bits) - 1 {
        return Decoded::Special;
    }
    if e_field == 0 && frac == 0 {
        return Decoded::Zero { neg };
    }
    let bias = sem.bias();
    let (sig, exponent) =
        if e_field == 0 { (frac, 1 - bias) } else { (frac | (1u64 << mant_bits), e_field - bias) };
    Decoded::Normal { neg, exp: exponent - mant_bits as i32, sig, precision: sem.precision }
}

/// `IEEEFloat::toString(Str, FormatPrecision, FormatMaxPadding, TruncateZero)`.
fn to_string(d: &Decoded, format_precision: u32, max_padding: u32, truncate_zero: bool) -> String {
    let mut out = String::new();
    let (neg, mut exp, sig, semantics_precision) = match *d {
        Decoded::Special => return String::new(),
        Decoded::Zero { neg } => {
            if neg {
                out.push('-');
            }
            if max_padding == 0 {
                if truncate_zero {
                    out.push_str("0.0E+0");
                } else {
                    out.push_str("0.0");
                    if format_precision > 1 {
                        out.extend(std::iter::repeat_n('0', format_precision as usize - 1));
                    }
                    out.push_str("e+00");
                }
            } else {
                out.push('0');
            }
            return out;
        }
        Decoded::Normal { neg, exp, sig, precision } => (neg, exp, sig, precision),
    };
    if neg {
        out.push('-');
    }
    let mut format_precision = format_precision;
    if format_precision == 0 {
        format_precision = 2 + semantics_precision * 59 / 196;
    }
    let tz = sig.trailing_zeros();
    exp += tz as i32;
    let mut significand = Big::from_u64(sig >> tz);
    if exp > 0 {
        significand.shl(exp as u32);
        exp = 0;
    } else if exp < 0 {
        for _ in 0..(-exp) {
            significand.mul_small(5);
        }
    }
    // AdjustToPrecision on the integer: drop digits we know are not needed.
    let bits = significand.bits();
    let bits_required = (format_precision * 196).div_ceil(59);
    if bits > bits_required {
        let tens_removable = (bits - bits_required) * 59 / 196;
        if tens_removable > 0 {
            exp += tens_removable as i32;
            for _ in 0..tens_removable {
                significand.divrem_small(10);
            }
        }
    }
    // Digits, least significant first, dropping trailing zeros.
    let mut buffer: Vec<u8> = Vec::new();
    let mut in_trail = true;
    while !significand.is_zero() {
        let digit = significand.divrem_small(10) as u8;
        if in_trail && digit == 0 {
            exp += 1;
        } else {
            buffer.push(b'0' + digit);
            in_trail = false;
        }
    }
    adjust_to_precision(&mut buffer, &mut exp, format_precision);
    let n_digits = buffer.len() as i32;

    let scientific = if max_padding == 0 {
        true
    } else if exp >= 0 {
        exp as u32 > max_padding || (n_digits + exp) as u32 > format_precision
    } else {
        let msd = exp + n_digits - 1;
        if msd >= 0 {
            false
        } else {
            (-msd) as u32 > max_padding
        }
    };
    let digit = |i: i32| buffer[i as usize] as char;
    if scientific {
        exp += n_digits - 1;
        out.push(digit(n_digits - 1));
        out.push('.');
        if n_digits == 1 && truncate_zero {
            out.push('0');
        } else {
            for i in 1..n_digits {
                out.push(digit(n_digits - 1 - i));
            }
        }
        if !truncate_zero && format_precision as i32 > n_digits - 1 {
            out.extend(std::iter::repeat_n('0', (format_precision as i32 - n_digits + 1) as usize));
        }
        out.push(if truncate_zero { 'E' } else { 'e' });
        out.push(if exp >= 0 { '+' } else { '-' });
        let e = exp.unsigned_abs();
        if !truncate_zero && e < 10 {
            out.push('0');
        }
        out.push_str(&e.to_string());
        return out;
    }
    if exp >= 0 {
        for i in 0..n_digits {
            out.push(digit(n_digits - 1 - i));
        }
        out.extend(std::iter::repeat_n('0', exp as usize));
        return out;
    }
    let n_whole = exp + n_digits;
    let mut i = 0;
    if n_whole > 0 {
        while i < n_whole {
            out.push(digit(n_digits - i - 1));
            i += 1;
        }
        out.push('.');
    } else {
        out.push_str("0.");
        for _ in 0..(-n_whole) {
            out.push('0');
        }
    }
    while i < n_digits {
        out.push(digit(n_digits - i - 1));
        i += 1;
    }
    out
}

/// `AdjustToPrecision` on the digit buffer (least significant digit first).
fn adjust_to_precision(buffer: &mut Vec<u8>, exp: &mut i32, format_precision: u32) {
    let n = buffer.len();
    let fp = format_precision as usize;
    if n <= fp {
        return;
    }
    let mut first_significant = n - fp;
    if buffer[first_significant - 1] < b'5' {
        while first_significant < n && buffer[first_significant] == b'0' {
            first_significant += 1;
        }
        *exp += first_significant as i32;
        buffer.drain(..first_significant);
        return;
    }
    // Decimal add-with-carry from the first kept digit.
    let start = first_significant;
    for digit in &mut buffer[start..n] {
        if *digit == b'9' {
            first_significant += 1;
        } else {
            *digit += 1;
            break;
        }
    }
    if first_significant == n {
        *exp += first_significant as i32;
        buffer.clear();
        buffer.push(b'1');
        return;
    }
    *exp += first_significant as i32;
    buffer.drain(..first_significant);
}

/// A minimal arbitrary-precision unsigned integer (little-endian 32-bit limbs).
struct Big {
    limbs: Vec<u32>,
}

impl Big {
    fn from_u64(v: u64) -> Big {
        let mut b = Big { limbs: vec![v as u32, (v >> 32) as u32] };
        b.trim();
        b
    }
    fn trim(&mut self) {
        while self.limbs.last() == Some(&0) {
            self.limbs.pop();
        }
    }
    fn is_zero(&self) -> bool {
        self.limbs.is_empty()
    }
    fn bits(&self) -> u32 {
        match self.limbs.last() {
            None => 0,
            Some(&top) => (self.limbs.len() as u32 - 1) * 32 + (32 - top.leading_zeros()),
        }
    }
    fn mul_small(&mut self, m: u32) {
        let mut carry = 0u64;
        for l in &mut self.limbs {
            let v = *l as u64 * m as u64 + carry;
            *l = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.limbs.push(carry as u32);
        }
    }
    fn shl(&mut self, n: u32) {
        let words = (n / 32) as usize;
        let bits = n % 32;
        if bits != 0 {
            let mut carry = 0u32;
            for l in &mut self.limbs {
                let v = ((*l as u64) << bits) | carry as u64;
                *l = v as u32;
                carry = (v >> 32) as u32;
            }
            if carry != 0 {
                self.limbs.push(carry);
            }
        }
        if words > 0 && !self.limbs.is_empty() {
            let mut v = vec![0u32; words];
            v.append(&mut self.limbs);
            self.limbs = v;
        }
    }
    fn divrem_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for l in self.limbs.iter_mut().rev() {
            let v = (rem << 32) | *l as u64;
            *l = (v / d as u64) as u32;
            rem = v % d as u64;
        }
        self.trim();
        rem as u32
    }
}

/// Prints a float literal written in the source (decimal text, or an integer literal
/// that gives the bits in hex) for a value of float type `ty`. `None` when `ty` is not a
/// float type we model (the caller keeps the text).
pub fn canonical_float(text: &str, ty: &str) -> Option<String> {
    let sem = FloatSem::of_type(ty)?;
    let t = text.trim();
    let bits = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()?
    } else {
        parse_decimal(t, sem)?
    };
    Some(format_float(bits, sem))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(text: &str, ty: &str) -> String {
        canonical_float(text, ty).unwrap()
    }

    #[test]
    fn mlir_float_printing() {
        assert_eq!(f("1.0", "f32"), "1.000000e+00");
        assert_eq!(f("1.5", "f64"), "1.500000e+00");
        assert_eq!(f("3.14159", "f32"), "3.141590e+00");
        assert_eq!(f("3.14159265358979", "f64"), "3.14159265358979");
        assert_eq!(f("1.0e-10", "f32"), "1.000000e-10");
        assert_eq!(f("0.0", "f32"), "0.000000e+00");
        assert_eq!(f("-0.0", "f32"), "-0.000000e+00");
        assert_eq!(f("0x7FC00000", "f32"), "0x7FC00000");
        assert_eq!(f("0x7F800000", "f32"), "0x7F800000");
        assert_eq!(f("0.1", "f64"), "1.000000e-01");
        assert_eq!(f("-2.5", "bf16"), "-2.500000e+00");
        assert_eq!(f("100", "f32"), "1.000000e+02");
        assert_eq!(f("0.3", "f32"), "3.000000e-01");
        assert_eq!(f("3.14159274", "f32"), "3.14159274");
        // Confirmed against MLIR: digits that do not round-trip and no '.' -> hex.
        assert_eq!(f("123456789.0", "f64"), "0x419D6F3454000000");
        // APFloat's truncating digit pre-pass (not plain %.6e rounding).
        assert_eq!(f("0.9", "f32"), "0.899999976");
        assert_eq!(f("0.1", "bf16"), "1.000980e-01");
        assert_eq!(f("0.2", "f16"), "1.999510e-01");
        assert_eq!(f("65504.0", "f16"), "6.550400e+04");
    }
}
