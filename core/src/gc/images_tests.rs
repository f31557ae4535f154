use std::time::{Duration, Instant};

use k8s_cri::v1 as cri;
use sergeant_config::KubeletConfiguration;

use super::{plan, Disk, Goal, Holders, Plan, PlanError, Policy, Reason, Records};

const MIB: u64 = 1024 * 1024;
const MINUTE: Duration = Duration::from_secs(60);

fn image(id: &str, size_mib: u64) -> cri::Image {
    cri::Image {
        id: id.to_owned(),
        repo_tags: vec![format!("registry/{id}:1.0")],
        size: size_mib * MIB,
        ..cri::Image::default()
    }
}

fn policy(high: u64, low: u64) -> Policy {
    Policy {
        high_percent: high,
        low_percent: low,
        min_age: Duration::ZERO,
        max_age: None,
    }
}

/// A 100 MiB image filesystem with `used` MiB used.
fn disk(used: u64) -> Goal {
    Goal::Thresholds(Disk {
        capacity: 100 * MIB,
        available: (100 - used) * MIB,
    })
}

fn ids(removals: &[super::Removal]) -> Vec<&str> {
    removals.iter().map(|r| r.id.as_str()).collect()
}

/// The ids the executor removes for space: `by_space` in order until `to_free` is reached.
fn removed_for_space(plan: &Plan) -> Vec<&str> {
    let Some(shortfall) = plan.shortfall else {
        return Vec::new();
    };
    let mut freed = 0u64;
    let mut out = Vec::new();
    for removal in &plan.by_space {
        if freed >= shortfall.to_free {
            break;
        }
        freed += removal.size;
        out.push(removal.id.as_str());
    }
    out
}

/// Records of `images`, each detected in its own pass one minute after the previous one
/// (so the first is the oldest), starting at `start`.
fn detected_in_turn(images: &[cri::Image], start: Instant) -> Records {
    let mut records = Records::default();
    for (n, _) in images.iter().enumerate() {
        records.detect(
            &images[..=n],
            &Holders::default(),
            start + MINUTE * u32::try_from(n).unwrap(),
        );
    }
    records
}

#[test]
fn policy_follows_the_configuration_and_high_100_without_max_age_disables() {
    let mut config = KubeletConfiguration::default();
    let defaults = Policy::of(&config);
    assert_eq!(
        defaults,
        Policy {
            high_percent: 85,
            low_percent: 80,
            min_age: Duration::from_secs(120),
            max_age: None,
        }
    );
    assert!(defaults.enabled());
    config.image_gc_high_threshold_percent = 100;
    assert!(!Policy::of(&config).enabled());
    config.image_maximum_gc_age = sergeant_config::Duration::from_secs(3600);
    let with_age = Policy::of(&config);
    assert_eq!(with_age.max_age, Some(Duration::from_secs(3600)));
    assert!(with_age.enabled());
}

#[test]
fn below_the_high_threshold_nothing_goes() {
    let now = Instant::now();
    let images = [image("a", 10), image("b", 10)];
    let records = detected_in_turn(&images, now);
    let plan = plan(
        &records,
        &Holders::default(),
        disk(84),
        &policy(85, 80),
        now + MINUTE * 5,
        now,
    )
    .unwrap();
    assert_eq!(plan, Plan::default());
}

#[test]
fn at_the_high_threshold_least_recently_used_go_until_the_low_threshold() {
    let start = Instant::now();
    // Detected a, b, c, d in turn; d then c were used (c last), a and b never.
    let images = [image("a", 2), image("b", 3), image("c", 4), image("d", 5)];
    let mut records = detected_in_turn(&images, start);
    let t = start + MINUTE * 10;
    let using = |ids: &[&str]| Holders {
        containers: ids.iter().map(|id| (*id).to_owned()).collect(),
        sandbox_image: None,
    };
    records.detect(&images, &using(&["d"]), t);
    records.detect(&images, &using(&["c"]), t + MINUTE);
    let now = t + MINUTE * 2;
    // 90 MiB used of 100: 10 MiB to free to reach 80 %.
    let plan = plan(
        &records,
        &Holders::default(),
        disk(90),
        &policy(85, 80),
        now,
        start,
    )
    .unwrap();
    assert_eq!(
        ids(&plan.by_space),
        ["a", "b", "d", "c"],
        "never used first, then by last use"
    );
    assert_eq!(plan.shortfall.unwrap().to_free, 10 * MIB);
    assert_eq!(plan.shortfall.unwrap().usage_percent, 90);
    assert_eq!(
        removed_for_space(&plan),
        ["a", "b", "d"],
        "2+3+5 MiB reach 10 MiB"
    );
    assert!(plan.by_space.iter().all(|r| r.reason == Reason::Space));
    assert_eq!(plan.by_space[0].shown, "registry/a:1.0");
}

#[test]
fn images_in_use_sandbox_pinned_and_young_images_never_go() {
    let start = Instant::now();
    let mut pinned = image("pinned", 10);
    pinned.pinned = true;
    let pause = image("pause", 10);
    let images = [
        image("running", 10),
        image("exited", 10),
        pause,
        pinned,
        image("free", 10),
    ];
    let mut records = Records::default();
    records.detect(&images, &Holders::default(), start);
    records.detect(
        &[image("young", 10)]
            .iter()
            .chain(&images)
            .cloned()
            .collect::<Vec<_>>(),
        &Holders::default(),
        start + MINUTE * 9,
    );
    let containers = [
        cri::Container {
            image_ref: "running".to_owned(),
            state: cri::ContainerState::ContainerRunning as i32,
            ..cri::Container::default()
        },
        cri::Container {
            image: Some(cri::ImageSpec {
                image: "registry/exited:1.0".to_owned(),
                ..cri::ImageSpec::default()
            }),
            state: cri::ContainerState::ContainerExited as i32,
            ..cri::Container::default()
        },
    ];
    let holders = Holders::of(&containers, Some("registry/pause:1.0".to_owned()));
    let mut policy = policy(50, 10);
    policy.min_age = MINUTE * 2;
    let now = start + MINUTE * 10;
    let plan = plan(&records, &holders, disk(99), &policy, now, start).unwrap();
    assert_eq!(ids(&plan.by_space), ["free"]);
    let all = super::plan(&records, &holders, Goal::AllUnused, &policy, now, start).unwrap();
    assert_eq!(
        ids(&all.by_space),
        ["free"],
        "disk pressure keeps the same images"
    );
    assert_eq!(all.shortfall.unwrap().to_free, u64::MAX);
}

#[test]
fn old_unused_images_go_for_age_whatever_the_usage_once_the_maximum_age_has_passed() {
    let start = Instant::now();
    let images = [image("old", 1), image("used-lately", 1), image("new", 1)];
    let mut records = Records::default();
    records.detect(&images[..2], &Holders::default(), start);
    let holders_of = |id: &str| Holders {
        containers: [id.to_owned()].into(),
        sandbox_image: None,
    };
    records.detect(
        &images[..2],
        &holders_of("used-lately"),
        start + MINUTE * 50,
    );
    records.detect(&images, &Holders::default(), start + MINUTE * 55);
    let mut policy = policy(85, 80);
    policy.max_age = Some(MINUTE * 30);
    // Within the first maximum age after start, nothing goes for age.
    let early = plan(
        &records,
        &Holders::default(),
        disk(10),
        &policy,
        start + MINUTE * 20,
        start,
    )
    .unwrap();
    assert!(early.by_age.is_empty());
    let now = start + MINUTE * 60;
    let plan = plan(&records, &Holders::default(), disk(10), &policy, now, start).unwrap();
    assert_eq!(ids(&plan.by_age), ["old"]);
    assert_eq!(plan.by_age[0].reason, Reason::Age);
    assert!(
        plan.by_space.is_empty(),
        "usage is low: nothing goes for space"
    );
    // An image in use is never old.
    let kept = super::plan(&records, &holders_of("old"), disk(10), &policy, now, start).unwrap();
    assert!(kept.by_age.is_empty());
}

#[test]
fn records_forget_images_no_longer_listed_and_keep_first_detection() {
    let start = Instant::now();
    let mut records = Records::default();
    records.detect(&[image("a", 1), image("b", 1)], &Holders::default(), start);
    records.detect(&[image("a", 2)], &Holders::default(), start + MINUTE);
    assert_eq!(records.len(), 1);
    let record = &records.images["a"];
    assert_eq!(record.first_detected, start);
    assert_eq!(record.size, 2 * MIB);
    records.forget("a");
    assert!(records.is_empty());
}

#[test]
fn thresholds_are_computed_as_upstream_without_overflow() {
    let now = Instant::now();
    let records = detected_in_turn(&[image("a", 1)], now);
    let zero = Goal::Thresholds(Disk {
        capacity: 0,
        available: 0,
    });
    assert_eq!(
        plan(
            &records,
            &Holders::default(),
            zero,
            &policy(85, 80),
            now,
            now
        ),
        Err(PlanError::ZeroCapacity)
    );
    // Available above capacity reads as all free; the largest sizes do not overflow.
    let huge = Goal::Thresholds(Disk {
        capacity: u64::MAX,
        available: u64::MAX,
    });
    let plan_huge = plan(&records, &Holders::default(), huge, &policy(0, 0), now, now).unwrap();
    assert_eq!(plan_huge.shortfall.unwrap().to_free, 0);
    // 85.5 % used reads as 86 % (upstream rounds usage up), over a high threshold of 86.
    let odd = Goal::Thresholds(Disk {
        capacity: 1000,
        available: 145,
    });
    let shortfall = plan(
        &records,
        &Holders::default(),
        odd,
        &policy(86, 80),
        now,
        now,
    )
    .unwrap()
    .shortfall
    .unwrap();
    assert_eq!((shortfall.usage_percent, shortfall.to_free), (86, 55));
}
