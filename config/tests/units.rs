//! Durations, quantities and thresholds: parsing, printing, round trips and rejections.

use sergeant_config::{Duration, Quantity, Signal, Threshold};

fn duration(text: &str) -> Duration {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn durations_parse_go_syntax() {
    let ms = |n: u64| Duration::from(std::time::Duration::from_millis(n));
    assert_eq!(duration("0"), Duration::ZERO);
    assert_eq!(duration("0s"), Duration::ZERO);
    assert_eq!(duration("100ms"), ms(100));
    assert_eq!(duration("1.5s"), ms(1500));
    assert_eq!(duration("1m0s"), Duration::from_secs(60));
    assert_eq!(duration("2h45m"), Duration::from_secs(2 * 3600 + 45 * 60));
    assert_eq!(duration("+5s"), Duration::from_secs(5));
    assert_eq!(duration(".5s"), ms(500));
    assert_eq!(
        duration("1h1m1s1ms1us1ns"),
        Duration::from(std::time::Duration::new(3661, 1_001_001))
    );
    assert_eq!(
        duration("3\u{b5}s"),
        Duration::from(std::time::Duration::from_micros(3))
    );
    assert_eq!(
        duration("1.0000000009s"),
        Duration::from(std::time::Duration::new(1, 0)),
        "sub-nanosecond truncated"
    );
}

#[test]
fn durations_print_like_go() {
    for (value, text) in [
        (Duration::ZERO, "0s"),
        (Duration::from_millis(100), "100ms"),
        (Duration::from_millis(1500), "1.5s"),
        (Duration::from_secs(60), "1m0s"),
        (Duration::from_secs(3600), "1h0m0s"),
        (Duration::from_secs(2 * 3600 + 45 * 60), "2h45m0s"),
        (
            Duration::from(std::time::Duration::from_nanos(1500)),
            "1.5\u{b5}s",
        ),
        (Duration::from(std::time::Duration::from_nanos(7)), "7ns"),
        (
            Duration::from(std::time::Duration::new(61, 250_000_000)),
            "1m1.25s",
        ),
    ] {
        assert_eq!(value.to_string(), text);
        assert_eq!(duration(text), value, "round trip of {text}");
    }
}

#[test]
fn durations_reject_bad_input() {
    for (text, reason) in [
        (
            "",
            "\"\" is not a duration: it is empty (write e.g. \"30s\")",
        ),
        (
            "10",
            "\"10\" is not a duration: missing unit after \"10\" (use ns, us, ms, s, m or h)",
        ),
        (
            "5d",
            "\"5d\" is not a duration: unknown unit \"d\" (use ns, us, ms, s, m or h)",
        ),
        (
            "-1s",
            "\"-1s\" is not a duration: negative durations are not allowed",
        ),
        ("s", "\"s\" is not a duration: expected a number at \"s\""),
        (
            "1.2.3s",
            "\"1.2.3s\" is not a duration: expected a number at \"1.2.3s\"",
        ),
        (
            "9999999999h",
            "\"9999999999h\" is not a duration: it is too long",
        ),
    ] {
        assert_eq!(text.parse::<Duration>().unwrap_err().to_string(), reason);
    }
}

fn quantity(text: &str) -> Quantity {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn quantities_parse_to_base_units() {
    for (text, value) in [
        ("0", 0),
        ("42", 42),
        ("100Mi", 100 << 20),
        ("1Gi", 1 << 30),
        ("1.5Gi", 3 << 29),
        ("1.5G", 1_500_000_000),
        ("1e3", 1000),
        ("1E3", 1000),
        ("2k", 2000),
        ("1E", 1_000_000_000_000_000_000),
        ("1Ki", 1024),
        ("500m", 1),
        ("+7", 7),
        ("-3", -3),
    ] {
        assert_eq!(quantity(text).value(), value, "{text}");
        assert_eq!(quantity(text).to_string(), text, "kept as written");
    }
    assert_eq!(quantity("500m").milli_value(), 500);
    assert_eq!(quantity("0.1").milli_value(), 100);
    assert_eq!(quantity("1u").milli_value(), 1, "rounded up");
    assert_eq!(Quantity::mebibytes(10), quantity("10Mi"));
    for zero in ["0", "0m", "0Gi", "-0"] {
        assert!(quantity(zero).is_zero(), "{zero}");
    }
    assert!(!quantity("1n").is_zero(), "the smallest amount is not zero");
}

#[test]
fn quantities_sum_exactly_and_print_their_shortest_exact_form() {
    let sum = quantity("100Mi").nanos() + quantity("0.5Gi").nanos();
    assert_eq!(Quantity::from_nanos(sum).as_str(), "641728512");
    assert_eq!(Quantity::from_nanos(sum).value(), 641_728_512);
    let cpu = quantity("1.5").nanos() + quantity("250m").nanos();
    assert_eq!(Quantity::from_nanos(cpu).as_str(), "1750m");
    assert_eq!(Quantity::from_nanos(quantity("2").nanos()).as_str(), "2");
    assert_eq!(Quantity::from_nanos(5).as_str(), "5n");
    assert_eq!(Quantity::from_nanos(0).as_str(), "0");
    let round_trip: Quantity = "1750m".parse().unwrap();
    assert_eq!(round_trip.nanos(), cpu);
}

#[test]
fn quantities_reject_bad_input() {
    for (text, reason) in [
        ("lots", "\"lots\" is not a quantity: expected a number such as \"100Mi\", \"1.5G\" or \"500m\""),
        ("", "\"\" is not a quantity: expected a number such as \"100Mi\", \"1.5G\" or \"500m\""),
        ("10MB", "\"10MB\" is not a quantity: unknown suffix \"MB\" (use Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E or an exponent such as e3)"),
        ("1e", "\"1e\" is not a quantity: unknown suffix \"e\" (use Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E or an exponent such as e3)"),
        ("1 Gi", "\"1 Gi\" is not a quantity: unknown suffix \" Gi\" (use Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E or an exponent such as e3)"),
        ("1e99", "\"1e99\" is not a quantity: it is too large"),
    ] {
        assert_eq!(text.parse::<Quantity>().unwrap_err().to_string(), reason);
    }
}

#[test]
fn thresholds_are_quantities_or_percentages() {
    assert_eq!(
        "10%".parse::<Threshold>().unwrap(),
        Threshold::Percentage(10.0)
    );
    assert_eq!("7.5%".parse::<Threshold>().unwrap().to_string(), "7.5%");
    assert_eq!(
        "100Mi".parse::<Threshold>().unwrap(),
        Threshold::Quantity(quantity("100Mi"))
    );
    for (text, reason) in [
        ("lots", "\"lots\" is not a quantity or a percentage"),
        ("x%", "\"x%\" is not a quantity or a percentage"),
        (
            "NaN%",
            "\"NaN%\" is out of range: a percentage must be between 0% and 100%",
        ),
        (
            "101%",
            "\"101%\" is out of range: a percentage must be between 0% and 100%",
        ),
        (
            "-1Mi",
            "\"-1Mi\" is negative: a threshold must be zero or more",
        ),
    ] {
        assert_eq!(text.parse::<Threshold>().unwrap_err().to_string(), reason);
    }
}

#[test]
fn signals_round_trip_their_names() {
    for signal in Signal::ALL {
        assert_eq!(signal.as_str().parse::<Signal>().unwrap(), signal);
    }
    assert!("memory".parse::<Signal>().is_err());
}
