//! The deployment's numeric variables (`spin.toml` `[variables]`): the one reader that turns a
//! raw value into a number. Each variable is a [`Bounded`] constant beside the code it limits
//! (its name, default and range, defined once).
//!
//! A value out of its range is clamped to the nearest bound and a value that is not a number
//! falls back to the default; both say so on stderr (the component log), because a limit that
//! changes silently turns a raised limit into a lower one (`max_streams_per_user = 5000` used
//! to become 8).

/// One numeric variable: its name, the value used when it is unset, and its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounded {
    pub name: &'static str,
    pub default: u64,
    pub min: u64,
    pub max: u64,
}

/// What a raw value means, and why when it is not taken as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// Unset or blank: the default.
    Default(u64),
    /// A number within the range.
    Taken(u64),
    /// A number outside the range, clamped to the bound it passed.
    Clamped { given: String, used: u64 },
    /// Not a non-negative whole number: the default.
    NotANumber { given: String, used: u64 },
}

impl Reading {
    pub fn value(&self) -> u64 {
        match self {
            Reading::Default(v) | Reading::Taken(v) => *v,
            Reading::Clamped { used, .. } | Reading::NotANumber { used, .. } => *used,
        }
    }
}

impl Bounded {
    /// What `raw` (the variable's value, `None` when unset) means for this variable.
    pub fn reading(&self, raw: Option<&str>) -> Reading {
        let Some(text) = raw.map(str::trim).filter(|t| !t.is_empty()) else {
            return Reading::Default(self.default);
        };
        match text.parse::<u128>() {
            Ok(n) if n < u128::from(self.min) => Reading::Clamped {
                given: text.to_string(),
                used: self.min,
            },
            Ok(n) if n > u128::from(self.max) => Reading::Clamped {
                given: text.to_string(),
                used: self.max,
            },
            // In range, so it fits in u64.
            Ok(n) => Reading::Taken(n as u64),
            Err(_) => Reading::NotANumber {
                given: text.to_string(),
                used: self.default,
            },
        }
    }

    /// The number to use for `raw`; a value not taken as written is logged with what is used.
    pub fn read(&self, raw: Option<&str>) -> u64 {
        let reading = self.reading(raw);
        if let Some(line) = self.log_line(&reading) {
            eprintln!("{line}");
        }
        reading.value()
    }

    /// The log line for a value not taken as written.
    pub fn log_line(&self, reading: &Reading) -> Option<String> {
        let (min, max) = (self.min, self.max);
        match reading {
            Reading::Default(_) | Reading::Taken(_) => None,
            Reading::Clamped { given, used } => Some(format!(
                "variable {}: {given} is outside {min}..={max}; using {used}",
                self.name
            )),
            Reading::NotANumber { given, used } => Some(format!(
                "variable {}: {given:?} is not a whole number in {min}..={max}; using the default {used}",
                self.name
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: Bounded = Bounded {
        name: "max_streams_per_user",
        default: 8,
        min: 1,
        max: 1000,
    };

    #[test]
    fn an_unset_or_blank_variable_is_the_default_and_logs_nothing() {
        assert_eq!(V.reading(None), Reading::Default(8));
        assert_eq!(V.reading(Some("  ")), Reading::Default(8));
        assert_eq!(V.log_line(&V.reading(None)), None);
    }

    #[test]
    fn a_value_in_range_is_taken_as_written() {
        assert_eq!(V.reading(Some(" 1000 ")), Reading::Taken(1000));
        assert_eq!(V.reading(Some("1")), Reading::Taken(1));
    }

    #[test]
    fn a_value_above_the_range_is_clamped_to_the_maximum_not_the_default() {
        let r = V.reading(Some("5000"));
        assert_eq!(r.value(), 1000);
        assert_eq!(
            V.log_line(&r).unwrap(),
            "variable max_streams_per_user: 5000 is outside 1..=1000; using 1000"
        );
        assert_eq!(V.reading(Some("99999999999999999999999")).value(), 1000);
    }

    #[test]
    fn a_value_below_the_range_is_clamped_to_the_minimum() {
        assert_eq!(V.reading(Some("0")).value(), 1);
    }

    #[test]
    fn a_value_that_is_not_a_number_is_the_default_and_says_so() {
        let r = V.reading(Some("-3"));
        assert_eq!(r.value(), 8);
        assert!(V
            .log_line(&r)
            .unwrap()
            .contains("\"-3\" is not a whole number"));
        assert_eq!(V.reading(Some("ten")).value(), 8);
    }
}
