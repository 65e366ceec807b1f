//! Share links and saved workspaces as a user meets them: a link someone sent, cut short by a
//! chat client, damaged by hand, made by an older Converge, or built to hang the tab. Each one
//! either restores the world it was made from or gives a one-line reason, never a panic.

use converge_core::engine::Input;
use converge_core::view::session::{self, SessionAction, Starter};
use converge_core::view::share::{
    self, from_hash, from_json, to_hash, to_json, ShareError, Workspace, HASH_PREFIX, MAX_ACTIONS,
    MAX_ADVANCE_MS,
};

fn played() -> Workspace {
    let mut w = Workspace::default();
    w.actions.extend([
        SessionAction::Step,
        SessionAction::apply(Input::Advance { ms: 1_600 }),
        SessionAction::NextEvent,
    ]);
    w.cursor = Some(3);
    w.editor_text = "kind: Deployment\n".into();
    w.principal = "bob".into();
    w
}

fn one_line(e: &ShareError) -> String {
    let line = e.to_string();
    assert!(!line.is_empty() && !line.contains('\n'), "{line:?}");
    line
}

#[test]
fn a_link_restores_the_same_world_the_session_had() {
    let w = played();
    let restored = from_hash(&to_hash(&w)).expect("the link decodes");
    assert_eq!(restored, w);
    let original = session::replay(w.starter, w.seed, &w.actions, |_, _| {});
    let world = share::replay(&restored, share::REPLAY_MAX_EVENTS, |_, _| {}).expect("replays");
    assert_eq!(world.trace_text(), original.trace_text());
    assert_eq!(world.steps(), 5);
}

#[test]
fn every_truncation_of_a_link_is_refused_with_a_reason() {
    let link = to_hash(&played());
    for cut in HASH_PREFIX.len()..link.len() {
        match from_hash(&link[..cut]) {
            Ok(_) => panic!("a link cut at {cut} of {} still opened", link.len()),
            Err(e) => {
                let line = one_line(&e);
                assert!(
                    matches!(
                        e,
                        ShareError::Base64 | ShareError::Inflate | ShareError::Json(_)
                    ),
                    "cut at {cut}: {line}"
                );
            }
        }
    }
    assert_eq!(from_hash("#w1"), Err(ShareError::Prefix));
    assert_eq!(
        from_hash(HASH_PREFIX).map_err(|e| e.to_string()),
        Err("the link is damaged (compression)".into())
    );
}

#[test]
fn a_corrupted_link_is_refused_or_restores_a_valid_session() {
    let link = to_hash(&played());
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let (mut refused, mut opened) = (0, 0);
    for at in HASH_PREFIX.len()..link.len() {
        let mut bytes = link.clone().into_bytes();
        let old = bytes[at];
        bytes[at] = alphabet[(alphabet.iter().position(|c| *c == old).unwrap_or(0) + 17) % 64];
        let damaged = String::from_utf8(bytes).expect("base64 is ASCII");
        match from_hash(&damaged) {
            Err(e) => {
                one_line(&e);
                refused += 1;
            }
            Ok(w) => {
                // Raw deflate has no checksum: a flip inside a string literal can survive.
                assert_eq!(w.validate(), Ok(()));
                share::replay(&w, share::REPLAY_MAX_EVENTS, |_, _| {}).expect("it replays");
                opened += 1;
            }
        }
    }
    assert!(
        refused > opened * 4,
        "{refused} refused, {opened} opened: most damage must be caught"
    );
    let not_base64 = format!("{}{}", HASH_PREFIX, "AAA*AAAA");
    assert_eq!(from_hash(&not_base64), Err(ShareError::Base64));
}

#[test]
fn links_and_saves_from_other_format_versions_say_which_version() {
    assert_eq!(
        from_hash("#w0.AAAA").map_err(|e| one_line(&e)),
        Err(
            "the saved workspace is from an older Converge (format 0); this build reads format 1"
                .into()
        )
    );
    assert_eq!(
        from_hash("#w7.AAAA").map_err(|e| one_line(&e)),
        Err(
            "the saved workspace is from a newer Converge (format 7); this build reads format 1"
                .into()
        )
    );
    // The first saves had no `v` at all.
    let unversioned = to_json(&played()).replacen("\"v\":1,", "", 1);
    assert_eq!(
        from_json(&unversioned),
        Err(ShareError::Version { found: 0 })
    );
    let newer = to_json(&played()).replacen("\"v\":1,", "\"v\":2,", 1);
    assert_eq!(from_json(&newer), Err(ShareError::Version { found: 2 }));
}

#[test]
fn a_save_missing_a_field_names_it() {
    let text = to_json(&played()).replacen("\"seed\":1,", "", 1);
    let e = from_json(&text).expect_err("no seed");
    assert!(one_line(&e).contains("missing field `seed`"), "{e}");
}

#[test]
fn out_of_bounds_fields_are_refused_naming_the_field() {
    let mut w = played();
    w.actions.push(SessionAction::apply(Input::Advance {
        ms: MAX_ADVANCE_MS + 1,
    }));
    assert_eq!(
        from_hash(&to_hash(&w)).map_err(|e| one_line(&e)),
        Err(format!(
            "the saved workspace is not valid: actions[5].input.ms: {} ms is more than the {MAX_ADVANCE_MS} ms one step may advance",
            MAX_ADVANCE_MS + 1
        ))
    );

    let mut w = played();
    w.cursor = Some(99);
    assert_eq!(
        from_json(&to_json(&w)).map_err(|e| one_line(&e)),
        Err("the saved workspace is not valid: cursor: step 99 is past the end of the session (5 steps)".into())
    );

    let mut w = played();
    w.principal = String::new();
    assert_eq!(
        from_json(&to_json(&w)).map_err(|e| one_line(&e)),
        Err("the saved workspace is not valid: principal: Required value".into())
    );

    let mut w = played();
    w.actions = vec![SessionAction::Step; MAX_ACTIONS + 1];
    let e = from_hash(&to_hash(&w)).expect_err("too many actions");
    assert!(
        matches!(&e, ShareError::Invalid { field, .. } if field == "actions"),
        "{e}"
    );
}

#[test]
fn a_link_that_inflates_past_the_cap_is_refused() {
    let mut w = played();
    w.editor_text = " ".repeat(share::MAX_INFLATED_BYTES);
    let link = to_hash(&w);
    assert!(
        link.len() < 20_000,
        "it deflates well: {} bytes",
        link.len()
    );
    assert_eq!(from_hash(&link), Err(ShareError::TooLarge));
}

#[test]
fn a_session_over_the_replay_budget_is_refused_at_the_step_that_crossed_it() {
    let mut w = Workspace::default();
    w.actions.extend(vec![SessionAction::Step; 10]);
    let mut events = Vec::new();
    share::replay(&w, share::REPLAY_MAX_EVENTS, |_, r| {
        events.push(r.events.len() as u64)
    })
    .expect("a short session replays");
    let through_second: u64 = events[..2].iter().sum();
    assert!(
        through_second > events[0],
        "the second step processed events"
    );
    let Err(e) = share::replay(&w, through_second - 1, |_, _| {}) else {
        panic!("a budget one event short still replayed");
    };
    assert_eq!(
        e,
        ShareError::ReplayBudget {
            max_events: through_second - 1,
            step: 2,
            total: 12
        }
    );
    assert_eq!(
        one_line(&e),
        format!(
            "the session did not replay within {} engine events (stopped after step 2 of 12)",
            through_second - 1
        )
    );
    let total: u64 = events.iter().sum();
    assert!(
        share::replay(&w, total, |_, _| {}).is_ok(),
        "exactly the budget is enough"
    );
}

#[test]
fn the_large_starter_replays_well_within_the_budget() {
    let w = Workspace::fresh(Starter::Large);
    let mut events = 0u64;
    let world = share::replay(&w, share::REPLAY_MAX_EVENTS, |_, r| {
        events += r.events.len() as u64
    })
    .expect("replays");
    assert!(world.is_converged());
    eprintln!("the large starter replays in {events} engine events");
    assert!(
        events * 4 < share::REPLAY_MAX_EVENTS,
        "{events} events: the budget must leave room for a long session"
    );
}
