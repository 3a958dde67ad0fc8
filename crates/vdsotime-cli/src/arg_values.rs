//! Parsers for numeric options, so an out-of-range value is a usage error (exit 64)
//! reported by the argument parser like a misspelt flag, not a failure of the run.

/// A finite number in (0, max].
fn bounded(s: &str, max: f64, unit: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of {unit}"))?;
    if v.is_finite() && v > 0.0 && v <= max {
        Ok(v)
    } else {
        Err(format!(
            "must be a positive number of {unit}, at most {max}"
        ))
    }
}

/// Seconds of measuring per path for the doctor: (0, 60].
pub fn doctor_seconds(s: &str) -> Result<f64, String> {
    bounded(s, 60.0, "seconds")
}

/// Seconds of checking: (0, one day].
pub fn check_seconds(s: &str) -> Result<f64, String> {
    bounded(s, 86_400.0, "seconds")
}

/// Microseconds per trial: (0, 10 s].
pub fn trial_us(s: &str) -> Result<f64, String> {
    bounded(s, 1e7, "microseconds")
}

/// Rounds of trials: at least 1 (a round runs every path once).
pub fn trials(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(0) => Err("must be at least 1: every round runs each path once".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{s:?} is not a whole number of rounds")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(doctor_seconds("0.2"), Ok(0.2));
        assert!(doctor_seconds("0").is_err());
        assert!(doctor_seconds("61").is_err());
        assert!(doctor_seconds("NaN").is_err());
        assert!(doctor_seconds("abc").unwrap_err().contains("not a number"));
        assert_eq!(trial_us("100"), Ok(100.0));
        assert!(trial_us("-1").is_err());
        assert!(check_seconds("inf").is_err());
        assert_eq!(trials("1"), Ok(1));
        assert!(trials("0").unwrap_err().contains("at least 1"));
        assert!(trials("-3").is_err());
    }
}
