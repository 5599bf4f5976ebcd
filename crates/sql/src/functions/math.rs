//! Logarithms, exponentials and trigonometry, as MariaDB's: LN, LOG (one or two
//! arguments), LOG2, LOG10, EXP, RADIANS, DEGREES, SIN, COS, TAN, COT, ASIN, ACOS, ATAN
//! (one or two arguments), ATAN2. DOUBLE results; outside a function's domain NULL (MariaDB
//! adds a warning). Arguments are non-NULL here.

use onelog_types::Value;

use crate::expr::to_f64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathFn {
    Ln,
    Log,
    Log2,
    Log10,
    Exp,
    Radians,
    Degrees,
    Sin,
    Cos,
    Tan,
    Cot,
    Asin,
    Acos,
    Atan,
    Atan2,
}

impl MathFn {
    /// By name: (function, min args, max args).
    pub fn lookup(name: &str) -> Option<(MathFn, usize, usize)> {
        use MathFn::*;
        Some(match name {
            "ln" => (Ln, 1, 1),
            "log" => (Log, 1, 2),
            "log2" => (Log2, 1, 1),
            "log10" => (Log10, 1, 1),
            "exp" => (Exp, 1, 1),
            "radians" => (Radians, 1, 1),
            "degrees" => (Degrees, 1, 1),
            "sin" => (Sin, 1, 1),
            "cos" => (Cos, 1, 1),
            "tan" => (Tan, 1, 1),
            "cot" => (Cot, 1, 1),
            "asin" => (Asin, 1, 1),
            "acos" => (Acos, 1, 1),
            "atan" => (Atan, 1, 2),
            "atan2" => (Atan2, 2, 2),
            _ => return None,
        })
    }
}

pub fn call_math(f: MathFn, a: &[Value]) -> Value {
    use MathFn::*;
    let x = to_f64(&a[0]);
    let r = match (f, a.get(1).map(to_f64)) {
        (Ln, _) => positive(x).map(f64::ln),
        (Log, None) => positive(x).map(f64::ln),
        // LOG(base, x)
        (Log, Some(v)) => match (positive(x), positive(v)) {
            (Some(b), Some(v)) if b != 1.0 => Some(v.ln() / b.ln()),
            _ => None,
        },
        (Log2, _) => positive(x).map(f64::log2),
        (Log10, _) => positive(x).map(f64::log10),
        (Exp, _) => Some(x.exp()),
        (Radians, _) => Some(x.to_radians()),
        (Degrees, _) => Some(x.to_degrees()),
        (Sin, _) => Some(x.sin()),
        (Cos, _) => Some(x.cos()),
        (Tan, _) => Some(x.tan()),
        (Cot, _) => (x.tan() != 0.0).then(|| 1.0 / x.tan()),
        (Asin, _) => (-1.0..=1.0).contains(&x).then(|| x.asin()),
        (Acos, _) => (-1.0..=1.0).contains(&x).then(|| x.acos()),
        (Atan, None) => Some(x.atan()),
        // ATAN(y, x) and ATAN2(y, x)
        (Atan | Atan2, Some(v)) => Some(x.atan2(v)),
        (Atan2, None) => None,
    };
    match r {
        Some(v) if v.is_finite() => Value::Double(v),
        _ => Value::Null,
    }
}

fn positive(x: f64) -> Option<f64> {
    (x > 0.0).then_some(x)
}
