//! Workflows: what a task records becomes a workflow with parameters; a replay finds its
//! elements again on a re-rendered page and refuses to guess; imports are checked.

use serde_json::json;

use super::*;
use crate::agent::actions::Action;
use crate::agent::element_map::ElementMap;
use crate::agent::snapshot::Snapshot;

/// A page of `(tag, role, name, context, id)` elements, in that document order.
fn page(url: &str, doc: &str, els: &[(&str, &str, &str, &str, &str)]) -> Snapshot {
    let elements: Vec<_> = els
        .iter()
        .enumerate()
        .map(|(i, (tag, role, name, context, id))| {
            json!({
                "handle": format!("{doc}.{i}"), "tag": tag, "implicitRole": role, "name": name,
                "context": context, "attrs": {"id": id},
                "bbox": {"x": 0, "y": i * 20, "width": 100, "height": 18},
                "visible": true, "inViewport": true, "interactive": ["native"]
            })
        })
        .collect();
    crate::json::from_value(json!({
        "docId": doc, "url": url, "title": "Shop", "scroll": {"x": 0, "y": 0},
        "viewport": {"width": 1000, "height": 800}, "page": {"width": 1000, "height": 800},
        "frames": [], "elements": elements, "truncated": false
    }))
    .expect("a snapshot")
}

fn results(doc: &str, reversed: bool) -> Snapshot {
    let mut els = vec![
        (
            "a",
            "link",
            "Blue backpack — $35",
            "Blue backpack — $35 Sturdy",
            "p1",
        ),
        ("a", "link", "Red scarf — $20", "Red scarf — $20 Wool", "p2"),
        (
            "a",
            "link",
            "Green hat — $15",
            "Green hat — $15 Cotton",
            "p3",
        ),
        ("a", "link", "Cart", "", "c"),
    ];
    if reversed {
        els.reverse();
        for e in &mut els {
            e.4 = "x-new";
        }
    }
    page("https://shop.test/search?q=blue+backpack", doc, &els)
}

fn entry_named<'m>(map: &'m ElementMap, name: &str) -> &'m Entry {
    map.entries()
        .iter()
        .find(|e| e.signature.name.norm == name.to_lowercase())
        .unwrap_or_else(|| panic!("no {name}"))
}

/// The recorded shop task: search, pick, size, add, cart.
fn recorded() -> Vec<RecordedStep> {
    let home = page(
        "https://shop.test/",
        "a",
        &[("input", "searchbox", "Search", "", "s1")],
    );
    let home_map = ElementMap::build(&home, None);
    let res = results("b", false);
    let res_map = ElementMap::build(&res, None);
    let product = page(
        "https://shop.test/product/blue-backpack",
        "c",
        &[
            ("select", "combobox", "Size", "", "z"),
            ("button", "button", "Add to cart", "Blue backpack", "add"),
        ],
    );
    let product_map = ElementMap::build(&product, None);
    let size = entry_named(&product_map, "Size");
    let add = entry_named(&product_map, "Add to cart");
    let search = entry_named(&home_map, "Search");
    let pick = entry_named(&res_map, "Blue backpack — $35");
    let cart = entry_named(&res_map, "Cart");
    let typed = Action::Type {
        element: search.id,
        text: "blue backpack".into(),
        clear: true,
        submit: true,
    };
    vec![
        record(&typed, &home.url, Some(search), false).unwrap(),
        record(
            &Action::Click { element: pick.id },
            &res.url,
            Some(pick),
            false,
        )
        .unwrap(),
        record(
            &Action::SelectOption {
                element: size.id,
                option: "M".into(),
                mode: Default::default(),
            },
            &product.url,
            Some(size),
            false,
        )
        .unwrap(),
        record(
            &Action::Click { element: add.id },
            &product.url,
            Some(add),
            false,
        )
        .unwrap(),
        record(
            &Action::Click { element: cart.id },
            &res.url,
            Some(cart),
            false,
        )
        .unwrap(),
    ]
}

fn workflow() -> Workflow {
    Workflow::from_task_proposed(
        "w1",
        "Search for blue backpack, size M, and add it to the cart",
        &recorded(),
    )
    .expect("a workflow")
}

#[test]
fn values_from_the_task_become_named_parameters() {
    let w = workflow();
    let params: Vec<(&str, &str)> = w
        .params
        .iter()
        .map(|p| (p.name.as_str(), p.value.as_str()))
        .collect();
    assert_eq!(params, [("query", "blue backpack"), ("size", "M")]);
    assert_eq!(
        w.goal,
        "Search for {query}, size {size}, and add it to the cart"
    );
    assert_eq!(w.start_url, "https://shop.test/");
    assert_eq!(w.name, "Search for blue backpack");
    let lines = w.step_lines();
    assert_eq!(
        lines[0],
        "type \u{201c}blue backpack\u{201d} (query) into searchbox \u{201c}search\u{201d} and submit"
    );
    assert_eq!(lines[1], "click link \u{201c}blue backpack — $35\u{201d}");
    assert_eq!(w.steps[1].target.as_ref().unwrap().name, "{query} — $35");
    // The product page's path holds the query's words: it varies with the query.
    assert_eq!(w.steps[2].page, "shop.test/product/*");
    assert_eq!(w.steps[0].page, "shop.test/");
    // Ids are never kept: pages generate them anew.
    assert!(w
        .steps
        .iter()
        .filter_map(|s| s.target.as_ref())
        .all(|t| t.attrs.iter().all(|(k, _)| k != "id")));
}

#[test]
fn a_value_the_task_does_not_contain_stays_fixed_and_a_single_letter_needs_a_whole_word() {
    let steps = recorded();
    let w = Workflow::from_task_proposed("w", "Buy the usual backpack in medium", &steps).unwrap();
    assert!(w.params.is_empty(), "{:?}", w.params);
    assert!(matches!(
        &w.steps[0].action,
        StepAction::Type { value: Value::Fixed(v), .. } if v == "blue backpack"
    ));
}

#[test]
fn a_password_is_never_stored() {
    let login = page(
        "https://shop.test/login",
        "l",
        &[("input", "textbox", "Password", "", "pw")],
    );
    let map = ElementMap::build(&login, None);
    let pw = entry_named(&map, "Password");
    let typed = Action::Type {
        element: pw.id,
        text: "hunter2-secret".into(),
        clear: true,
        submit: false,
    };
    let step = record(&typed, &login.url, Some(pw), true).unwrap();
    let w = Workflow::from_task_proposed(
        "w",
        "log in with hunter2-secret",
        std::slice::from_ref(&step),
    )
    .unwrap();
    let stored = serde_json::to_string(&w).unwrap();
    assert!(!stored.contains("hunter2"), "{stored}");
    assert_eq!(w.goal, "log in with (the secret)");
    // Nor in the name the person chose, should they have typed it there too.
    let named = Workflow::from_task(
        "w",
        "log in with hunter2-secret",
        "Log in as hunter2-secret",
        std::slice::from_ref(&step),
    )
    .unwrap();
    assert_eq!(named.name, "Log in as (the secret)");
    assert!(matches!(
        w.steps[0].action,
        StepAction::Type {
            value: Value::Secret,
            ..
        }
    ));
}

#[test]
fn replay_finds_each_element_on_a_re_rendered_page() {
    let w = workflow();
    let fresh = results("z", true);
    let map = ElementMap::build(&fresh, None);
    let pick = w.steps[1].target.as_ref().unwrap();
    let id = locate(pick, &w.params, map.entries()).expect("found");
    assert_eq!(map.element(id, &fresh).unwrap().name, "Blue backpack — $35");
    let cart = w.steps[4].target.as_ref().unwrap();
    let id = locate(cart, &w.params, map.entries()).expect("found");
    assert_eq!(map.element(id, &fresh).unwrap().name, "Cart");
}

#[test]
fn a_parameter_picks_the_other_product() {
    let w = workflow();
    let values = w.values(&[("query".into(), "red scarf".into())]).unwrap();
    let fresh = results("y", true);
    let map = ElementMap::build(&fresh, None);
    let id = locate(w.steps[1].target.as_ref().unwrap(), &values, map.entries()).unwrap();
    assert_eq!(map.element(id, &fresh).unwrap().name, "Red scarf — $20");
    let replay = Replay::new(&w, values);
    assert!(matches!(
        replay.action(&w.steps[0], Some(3), None),
        Some(Action::Type { text, .. }) if text == "red scarf"
    ));
    assert!(w
        .values(&[("colour".into(), "x".into())])
        .unwrap_err()
        .english()
        .contains("its parameters are: query, size"));
}

#[test]
fn a_renamed_or_doubled_element_is_a_divergence_not_a_guess() {
    let w = workflow();
    let cart = w.steps[4].target.as_ref().unwrap();
    let renamed = page(
        "https://shop.test/search",
        "r",
        &[
            ("a", "link", "Basket", "", "c"),
            ("a", "link", "Help", "", "h"),
        ],
    );
    let map = ElementMap::build(&renamed, None);
    assert_eq!(
        locate(cart, &w.params, map.entries()),
        Err(Divergence::NotFound("link \u{201c}cart\u{201d}".into()))
    );
    let twins = page(
        "https://shop.test/search",
        "t",
        &[
            ("a", "link", "Cart", "", "c1"),
            ("a", "link", "Cart", "", "c2"),
            ("a", "link", "Cart", "", "c3"),
        ],
    );
    let map = ElementMap::build(&twins, None);
    assert!(matches!(
        locate(cart, &w.params, map.entries()),
        Err(Divergence::Ambiguous(_))
    ));
}

#[test]
fn pages_match_by_pattern() {
    assert!(page_matches(
        "shop.test/product/*",
        "https://shop.test/product/red-scarf?x=1"
    ));
    assert!(!page_matches(
        "shop.test/product/*",
        "https://shop.test/cart"
    ));
    assert!(page_matches("shop.test/", "https://shop.test/"));
    assert!(page_matches("", "https://anything.test/x"));
    assert!(!page_matches("shop.test/cart", "https://evil.test/cart"));
    assert_eq!(
        url_pattern("https://Shop.test/orders/2024-11?id=3#x", &[]),
        "shop.test/orders/*"
    );
    assert_eq!(url_pattern("javascript:alert(1)", &[]), "");
}

#[test]
fn a_diverged_run_names_the_step_and_hands_the_rest_to_the_model() {
    let w = workflow();
    let mut replay = Replay::new(&w, w.params.clone());
    assert!(matches!(
        replay.current().unwrap().action,
        StepAction::Type { .. }
    ));
    assert_eq!(replay.start_url, "https://shop.test/");
    replay.next = 3;
    let sentence = replay.diverge("the button \u{201c}add to cart\u{201d} was not found", true);
    assert_eq!(
        sentence,
        "step 4: the button \u{201c}add to cart\u{201d} was not found; the model took over from there"
    );
    assert!(replay.current().is_none());
    assert!(!replay.finished());
    let hint = replay.hint();
    assert!(hint.contains("query = blue backpack"), "{hint}");
    assert!(
        hint.contains("4. click button \u{201c}add to cart\u{201d}"),
        "{hint}"
    );
    assert!(
        hint.contains("5. click link \u{201c}cart\u{201d}"),
        "{hint}"
    );
    assert!(!hint.contains("1. type"), "{hint}");
}

#[test]
fn an_update_keeps_name_and_parameters_and_takes_the_new_steps() {
    let w = workflow();
    let mut steps = recorded();
    steps.pop();
    let updated = w.updated(&steps, &w.params).unwrap();
    assert_eq!(updated.name, w.name);
    assert_eq!(updated.params, w.params);
    assert_eq!(updated.steps.len(), 4);
}

#[test]
fn run_commands_are_read_with_values_that_have_spaces() {
    assert_eq!(
        run_command("/run Shop order query=red scarf size=M"),
        Some((
            "Shop order".into(),
            vec![
                ("query".into(), "red scarf".into()),
                ("size".into(), "M".into())
            ]
        ))
    );
    assert_eq!(run_command("/run"), Some((String::new(), vec![])));
    assert_eq!(run_command("/running fast"), None);
    assert_eq!(run_command("buy a hat"), None);
}

#[test]
fn exported_workflows_import_again_with_new_ids() {
    let mut w = workflow();
    w.last_run = Some(LastRun {
        at: 5,
        outcome: "Done".into(),
        said: None,
    });
    let file = export(std::slice::from_ref(&w));
    let back = import(file.as_bytes(), |i| format!("new{i}")).unwrap();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].id, "new0");
    assert_eq!(back[0].last_run, None);
    assert_eq!(back[0].steps, w.steps);
    let stored = serde_json::to_string(&back).unwrap();
    assert_eq!(read_stored(&stored), back);
}

#[test]
fn hostile_or_malformed_imports_are_refused_with_a_sentence() {
    let good = serde_json::to_value(workflow()).unwrap();
    let with = |path: &[&str], value: serde_json::Value| {
        let mut v = good.clone();
        let mut at = &mut v;
        for p in &path[..path.len() - 1] {
            at = match p.parse::<usize>() {
                Ok(i) => &mut at[i],
                Err(_) => &mut at[*p],
            };
        }
        at[path[path.len() - 1]] = value;
        serde_json::to_vec(&v).unwrap()
    };
    let id = |i: usize| format!("n{i}");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "javascript start",
            with(&["startUrl"], json!("javascript:alert(1)")),
            "start address is not an http or https address",
        ),
        (
            "javascript step",
            with(
                &["steps", "0", "action"],
                json!({"navigate": {"url": "JavaScript:alert(1)"}}),
            ),
            "step 1's address",
        ),
        (
            "data url",
            with(&["startUrl"], json!("data:text/html,hi")),
            "not an http or https",
        ),
        (
            "wrong type",
            with(&["steps"], json!("many")),
            "not in the expected form",
        ),
        (
            "number name",
            with(&["name"], json!(5)),
            "not in the expected form",
        ),
        (
            "missing param",
            with(&["params"], json!([])),
            "uses a parameter it does not have",
        ),
        (
            "control chars",
            with(&["goal"], json!("a\u{0}b")),
            "control characters",
        ),
        // The name is checked too, and quoted with its control characters shown.
        (
            "control chars in the name",
            with(&["name"], json!("Evil\u{7}")),
            "Evil␇",
        ),
        ("not json", b"{not json".to_vec(), "not valid JSON"),
        ("empty", b"[]".to_vec(), "1 to 200 workflows"),
        ("a number", b"42".to_vec(), "holds no workflows"),
        ("binary", vec![0xff, 0xfe, 0x00], "not a text file"),
        (
            "oversized",
            vec![b' '; 10 * 1024 * 1024],
            "larger than 512 KB",
        ),
    ];
    for (what, bytes, says) in cases {
        let err = import(&bytes, id).expect_err(what).english();
        assert!(
            err.starts_with("This file cannot be imported"),
            "{what}: {err}"
        );
        assert!(err.contains(says), "{what}: {err}");
    }
}

#[test]
fn parameters_can_be_renamed_or_made_fixed() {
    let mut w = workflow();
    w.rename_param("query", "item").unwrap();
    assert_eq!(
        w.goal,
        "Search for {item}, size {size}, and add it to the cart"
    );
    assert_eq!(w.steps[1].target.as_ref().unwrap().name, "{item} — $35");
    assert!(w.rename_param("item", "size").is_err());
    assert!(w.rename_param("item", "a b").is_err());
    w.remove_param("item");
    assert_eq!(
        w.goal,
        "Search for blue backpack, size {size}, and add it to the cart"
    );
    assert_eq!(
        w.steps[1].target.as_ref().unwrap().name,
        "blue backpack — $35"
    );
    assert!(matches!(
        &w.steps[0].action,
        StepAction::Type { value: Value::Fixed(v), .. } if v == "blue backpack"
    ));
    check(&w).unwrap();
}

#[test]
fn a_scheduled_run_without_the_models_leave_says_so_until_it_is_resumed() {
    let w = workflow();
    let mut replay = Replay::new(&w, w.params.clone());
    replay.next = 3;
    let sentence = replay.diverge(
        "the button \u{201c}add to cart\u{201d} was not found",
        false,
    );
    assert_eq!(
        sentence,
        "step 4: the button \u{201c}add to cart\u{201d} was not found"
    );
    assert!(replay.current().is_none(), "nothing more is replayed");
    // Resume: the model goes on, and the run's sentence says so, once.
    replay.hand_to_model();
    replay.hand_to_model();
    assert_eq!(
        replay.diverged.as_deref(),
        Some("step 4: the button \u{201c}add to cart\u{201d} was not found; the model took over from there")
    );
    assert!(
        replay.hint().contains("stopped at step 4"),
        "{}",
        replay.hint()
    );
}

/// A product page whose buy control is `control`, a snapshot element as the driver writes it.
fn buy_page(doc: &str, control: serde_json::Value) -> Snapshot {
    let mut control = control;
    let extra = json!({
        "handle": format!("{doc}.1"), "context": "Blue backpack $35 Sturdy",
        "bbox": {"x": 0, "y": 40, "width": 100, "height": 18},
        "visible": true, "inViewport": true, "interactive": ["native"]
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        control[k] = v.clone();
    }
    let size = json!({
        "handle": format!("{doc}.0"), "tag": "select", "implicitRole": "combobox", "name": "Size",
        "bbox": {"x": 0, "y": 0, "width": 100, "height": 18},
        "visible": true, "inViewport": true, "interactive": ["native"]
    });
    crate::json::from_value(json!({
        "docId": doc, "url": "https://shop.test/product/blue-backpack", "title": "Shop",
        "scroll": {"x": 0, "y": 0}, "viewport": {"width": 1000, "height": 800},
        "page": {"width": 1000, "height": 800}, "frames": [], "elements": [size, control],
        "truncated": false
    }))
    .expect("a snapshot")
}

#[test]
fn a_replay_accepts_a_control_the_list_names_alike_whatever_its_markup_and_refuses_another() {
    let button = json!({"tag": "button", "implicitRole": "button", "name": "Add to cart", "text": "Add to cart"});
    let submit = |value: &str| {
        json!({"tag": "input", "implicitRole": "button", "name": value,
               "attrs": {"type": "submit", "value": value}})
    };
    for (recorded_as, replayed_as) in [
        (button.clone(), submit("Add to cart")),
        (submit("Add to cart"), button.clone()),
    ] {
        let before = buy_page("a", recorded_as);
        let map = ElementMap::build(&before, None);
        let target = Target::of(&entry_named(&map, "Add to cart").signature);
        let after = buy_page("b", replayed_as);
        let map = ElementMap::build(&after, None);
        let id = locate(&target, &[], map.entries()).expect("the same control, other markup");
        assert_eq!(id, entry_named(&map, "Add to cart").id);
        // Another control on the same spot is still refused.
        let other = buy_page("c", submit("Add to wishlist"));
        let map = ElementMap::build(&other, None);
        assert!(matches!(
            locate(&target, &[], map.entries()),
            Err(Divergence::NotFound(_))
        ));
    }
}
