//! The judge on pages shaped like real applications' (a web framework's admin, an issue
//! tracker, a notebook IDE, a CMS): element lists as the driver reports them, page text as a
//! person reads it. The rules are generic; these pages only prove them where they failed.

use serde_json::{json, Value};

use super::actions::Action;
use super::judge::*;
use super::safety::{seen_as, PaymentField};
use super::snapshot::{Element, Snapshot};

/// An element as the driver reports it: `tag`, its accessible `name`, then any other fields.
fn e(tag: &str, name: &str, extra: Value) -> Value {
    let role = match tag {
        "button" => Some("button"),
        "a" => Some("link"),
        "textarea" => Some("textbox"),
        "select" => Some("combobox"),
        _ => None,
    };
    let mut v = json!({
        "tag": tag, "name": name, "attrs": {},
        "bbox": {"x": 0, "y": 0, "width": 10, "height": 10},
        "visible": true, "interactive": ["native"]
    });
    if let Some(r) = role {
        v["implicitRole"] = json!(r);
    }
    for (k, x) in extra.as_object().into_iter().flatten() {
        v[k] = x.clone();
    }
    v
}

/// A submit input of form 0 that posts (`<input type="submit" value="…">`).
fn submit(value: &str) -> Value {
    e(
        "input",
        value,
        json!({"implicitRole": "button", "attrs": {"type": "submit", "value": value},
               "form": 0, "formMethod": "post"}),
    )
}

/// A page: elements get handles `d.0`, `d.1`… in order.
fn page(url: &str, title: &str, elements: Vec<Value>) -> Snapshot {
    let elements: Vec<Value> = elements
        .into_iter()
        .enumerate()
        .map(|(i, mut v)| {
            v["handle"] = json!(format!("d.{i}"));
            v
        })
        .collect();
    crate::json::from_value(json!({
        "docId": "d", "url": url, "title": title,
        "scroll": {"x": 0, "y": 0}, "viewport": {"width": 1280, "height": 720},
        "page": {"width": 1280, "height": 720}, "frames": [], "elements": elements,
        "truncated": false
    }))
    .unwrap()
}

fn find<'a>(page: &'a Snapshot, name: &str) -> &'a Element {
    page.elements
        .iter()
        .find(|el| el.name == name)
        .unwrap_or_else(|| panic!("no element named {name:?}"))
}

/// Memory in which the agent changed the fields named `names` on `page`.
fn changed(page: &Snapshot, names: &[&str]) -> JudgeMemory {
    JudgeMemory {
        changed: names.iter().map(|n| find(page, n).handle.clone()).collect(),
        approved: None,
    }
}

struct At<'a> {
    page: &'a Snapshot,
    task: &'a str,
    words: Option<&'a str>,
    memory: &'a JudgeMemory,
    step: u32,
}

impl At<'_> {
    fn judge(&self, name: &str, action: &Action) -> Option<Verdict> {
        let user = [self.task];
        judge(&Step {
            action,
            element: find(self.page, name),
            page: self.page,
            drop_on: None,
            page_words: self.words,
            user_texts: &user,
            memory: self.memory,
            step: self.step,
        })
    }

    fn click(&self, name: &str) -> Option<Verdict> {
        self.judge(name, &Action::Click { element: 1 })
    }

    /// The question's reason as the person reads it after the control's name.
    fn says(&self, name: &str) -> Option<String> {
        self.click(name).map(|v| v.reason.to_string())
    }
}

fn at<'a>(page: &'a Snapshot, task: &'a str, memory: &'a JudgeMemory) -> At<'a> {
    At {
        page,
        task,
        words: None,
        memory,
        step: 5,
    }
}

fn kind(v: &Option<Verdict>) -> Option<Kind> {
    v.as_ref().and_then(Verdict::kind)
}

fn unasked(v: &Option<Verdict>) -> bool {
    matches!(
        v.as_ref().map(|v| &v.reason),
        Some(ConfirmReason::Change { unasked: true, .. })
    )
}

const ADMIN: &str = "https://admin.app.test/admin/library/book/";

/// A framework admin's list of books: rows ticked, the bulk action chosen, "Go".
fn changelist(action: usize) -> Snapshot {
    let options: Vec<Value> = ["---------", "Delete selected books", "Export as CSV"]
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"value": if i == 0 { "" } else { "x" }, "text": t, "selected": i == action}))
        .collect();
    page(
        ADMIN,
        "Select book to change | Django site admin",
        vec![
            e(
                "select",
                "Action:",
                json!({"attrs": {"name": "action"}, "form": 0,
                "formMethod": "post", "options": options,
                "context": "Action: --------- Delete selected books Go 2 of 2 selected"}),
            ),
            e(
                "button",
                "Go",
                json!({"attrs": {"name": "index", "value": "0", "title": "Run the selected action"},
                "form": 0, "formMethod": "post",
                "context": "Action: --------- Delete selected books Go 2 of 2 selected"}),
            ),
            e(
                "input",
                "Select this object for an action - Dune",
                json!({"implicitRole": "checkbox",
                "attrs": {"type": "checkbox", "name": "_selected_action", "value": "1"},
                "checked": "true", "form": 0, "formMethod": "post", "context": "Dune Frank Herbert 1965"}),
            ),
            e(
                "input",
                "Select this object for an action - Children of Dune",
                json!({"implicitRole": "checkbox",
                "attrs": {"type": "checkbox", "name": "_selected_action", "value": "2"},
                "checked": "true", "form": 0, "formMethod": "post",
                "context": "Children of Dune Frank Herbert 1976"}),
            ),
            e(
                "input",
                "Search",
                json!({"attrs": {"type": "text", "name": "q"}, "form": 1}),
            ),
            e(
                "input",
                "Search",
                json!({"implicitRole": "button", "attrs": {"type": "submit", "value": "Search"}, "form": 1}),
            ),
        ],
    )
}

/// The admin's own confirmation page for a bulk delete.
fn bulk_confirmation() -> (Snapshot, &'static str) {
    let page = page(
        "https://admin.app.test/admin/library/book/",
        "Are you sure? | Django site admin",
        vec![
            e(
                "input",
                "Yes, I’m sure",
                json!({"implicitRole": "button",
                "attrs": {"type": "submit", "value": "Yes, I’m sure"}, "form": 0,
                "formMethod": "post", "context": "Yes, I’m sure No, take me back"}),
            ),
            e(
                "a",
                "No, take me back",
                json!({"attrs": {"href": "#"}, "context": "Yes, I’m sure No, take me back"}),
            ),
            e("a", "Home", json!({"attrs": {"href": "/admin/"}})),
        ],
    );
    let words = "Django administration\nHome › Library › Books › Delete multiple objects\n\
        Are you sure?\nAre you sure you want to delete the selected books? All of the following \
        objects and their related items will be deleted:\nSummary\nBooks: 2\nObjects\n\
        Book: Dune\nBook: Children of Dune\nYes, I’m sure No, take me back";
    (page, words)
}

#[test]
fn an_admins_bulk_delete_asks_once_at_go_and_its_confirmation_is_covered() {
    let none = JudgeMemory::default();
    let list = changelist(1);
    let task = "Delete all books by Frank Herbert";
    let go = at(&list, task, &none).click("Go");
    assert_eq!(kind(&go), Some(Kind::Delete), "{go:?}");
    assert!(!unasked(&go), "the task asked for deleting");
    let sentence = approval_sentence(
        &Action::Click { element: 2 },
        find(&list, "Go"),
        &go.as_ref().unwrap().reason,
    );
    assert_eq!(sentence, "Tandem wants to click the \u{201c}Go\u{201d} button, which deletes something: that may not be undoable (it runs \u{201c}Delete selected books\u{201d}).");
    // Another bulk action, and the page's search, ask nothing.
    assert!(at(&changelist(2), task, &none).click("Go").is_none());
    assert!(at(&changelist(0), task, &none).click("Go").is_none());
    let search = at(&list, task, &none);
    assert!(search
        .judge(
            "Search",
            &Action::Type {
                element: 5,
                text: "Herbert".into(),
                clear: true,
                submit: true
            }
        )
        .is_none());

    // Approved at step 5: the admin's "Yes, I'm sure" at step 6 is that act's confirmation.
    let (confirm, words) = bulk_confirmation();
    let mut memory = JudgeMemory::default();
    memory.approve(go.as_ref().unwrap());
    let covered = At {
        page: &confirm,
        task,
        words: Some(words),
        memory: &memory,
        step: 6,
    };
    assert!(
        covered.click("Yes, I’m sure").is_none(),
        "no second question"
    );
    assert!(covered.click("No, take me back").is_none());
    // Long after the approval, it is asked again.
    let late = At { step: 9, ..covered };
    assert_eq!(kind(&late.click("Yes, I’m sure")), Some(Kind::Delete));
}

#[test]
fn a_confirmation_pages_yes_takes_its_kind_from_the_pages_question() {
    let (confirm, words) = bulk_confirmation();
    let none = JudgeMemory::default();
    let yes = At {
        page: &confirm,
        task: "Tidy up the library",
        words: Some(words),
        memory: &none,
        step: 3,
    };
    let v = yes.click("Yes, I’m sure");
    assert_eq!(kind(&v), Some(Kind::Delete), "{v:?}");
    assert!(unasked(&v), "tidying up does not say delete");
    assert_eq!(
        approval_sentence(&Action::Click { element: 1 }, find(&confirm, "Yes, I’m sure"), &v.unwrap().reason),
        "Tandem wants to click the \u{201c}Yes, I\u{2019}m sure\u{201d} button, which deletes something: that may not be undoable (the page asks: \u{201c}Are you sure you want to delete the selected books?\u{201d}). Your task did not ask for that: a page may have told the agent to."
    );
    // Without the page's words, only what surrounds the button is known: nothing to ask.
    let blind = At { words: None, ..yes };
    assert!(blind.click("Yes, I’m sure").is_none());
    // An "OK" under a question of no kind asks nothing.
    let cookies = At {
        words: Some("Do you want to see our newsletter?\nOK"),
        ..yes
    };
    assert!(cookies.click("Yes, I’m sure").is_none());
}

#[test]
fn the_apps_confirmation_of_an_approved_act_is_covered_and_another_objects_is_not() {
    let item = page(
        "https://notes.app.test/pages/7",
        "Dune | Pages",
        vec![e(
            "button",
            "Delete",
            json!({"context": "Dune Frank Herbert Delete"}),
        )],
    );
    let none = JudgeMemory::default();
    let first = at(&item, "delete the Dune page", &none).click("Delete");
    assert_eq!(kind(&first), Some(Kind::Delete));
    let mut memory = JudgeMemory::default();
    memory.approve(first.as_ref().unwrap());
    let dialog = page(
        "https://notes.app.test/pages/7/delete",
        "Delete",
        vec![
            e(
                "button",
                "Yes, delete it",
                json!({"context": "Yes, delete it Cancel"}),
            ),
            e(
                "button",
                "Yes, publish it",
                json!({"context": "Yes, publish it Cancel"}),
            ),
        ],
    );
    let same = At {
        page: &dialog,
        task: "delete the Dune page",
        words: Some("Delete page\nAre you sure you want to delete “Dune”?"),
        memory: &memory,
        step: 6,
    };
    assert!(
        same.click("Yes, delete it").is_none(),
        "covered by the approval"
    );
    // Another object, another act, another site: asked.
    let other = At {
        words: Some("Are you sure you want to delete “Foundation”?"),
        ..same
    };
    assert_eq!(kind(&other.click("Yes, delete it")), Some(Kind::Delete));
    assert_eq!(kind(&same.click("Yes, publish it")), Some(Kind::Publish));
    let elsewhere = page(
        "https://other.app.test/x",
        "Delete",
        dialog
            .elements
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect(),
    );
    let away = At {
        page: &elsewhere,
        ..same
    };
    assert_eq!(kind(&away.click("Yes, delete it")), Some(Kind::Delete));
    // No approval: the app's confirmation is asked about.
    let fresh = At {
        memory: &none,
        ..same
    };
    assert_eq!(kind(&fresh.click("Yes, delete it")), Some(Kind::Delete));
}

#[test]
fn a_file_browsers_delete_dialog_is_covered_by_the_approved_menu_item() {
    let browser = page(
        "https://lab.app.test/lab/tree",
        "JupyterLab",
        vec![
            e(
                "li",
                "Untitled.ipynb",
                json!({"role": "option", "attrs": {"aria-selected": "true", "title": "Name: Untitled.ipynb"}}),
            ),
            e(
                "li",
                "analysis.ipynb",
                json!({"role": "option", "attrs": {"aria-selected": "false"}}),
            ),
            e(
                "li",
                "Delete",
                json!({"role": "menuitem", "context": "Open Rename Delete Cut Copy"}),
            ),
        ],
    );
    let none = JudgeMemory::default();
    let menu = at(&browser, "Delete the untitled notebook", &none).click("Delete");
    assert_eq!(kind(&menu), Some(Kind::Delete));
    let mut memory = JudgeMemory::default();
    memory.approve(menu.as_ref().unwrap());
    let dialog = page(
        "https://lab.app.test/lab/tree",
        "JupyterLab",
        vec![
            e("button", "Cancel", json!({"context": "Cancel Delete"})),
            e("button", "Delete", json!({"context": "Cancel Delete"})),
        ],
    );
    let words =
        "Delete\nAre you sure you want to permanently delete: Untitled.ipynb?\nCancel Delete";
    let same = At {
        page: &dialog,
        task: "Delete the untitled notebook",
        words: Some(words),
        memory: &memory,
        step: 6,
    };
    assert!(
        same.click("Delete").is_none(),
        "the dialog confirms the approved act"
    );
    let other = At {
        words: Some("Are you sure you want to permanently delete: analysis.ipynb?"),
        ..same
    };
    assert_eq!(
        kind(&other.click("Delete")),
        Some(Kind::Delete),
        "another file asks"
    );
}

#[test]
fn trash_unpublish_and_publish_controls_ask() {
    let none = JudgeMemory::default();
    let ide = page(
        "https://lab.app.test/lab/tree",
        "JupyterLab",
        vec![
            e("li", "Move to Trash", json!({"role": "menuitem"})),
            e("li", "Rename", json!({"role": "menuitem"})),
            e("a", "Trash", json!({"attrs": {"href": "/trash"}})),
        ],
    );
    let lab = at(&ide, "Clean up the notebooks folder", &none);
    assert_eq!(kind(&lab.click("Move to Trash")), Some(Kind::Delete));
    assert!(lab.click("Rename").is_none());
    assert!(
        lab.click("Trash").is_none(),
        "opening the trash folder deletes nothing"
    );
    let cms = page(
        "https://cms.app.test/admin/pages/3/unpublish/",
        "Unpublish About",
        vec![
            submit("Yes, unpublish it"),
            e(
                "a",
                "No, don't unpublish",
                json!({"attrs": {"href": "/admin/pages/3/"}}),
            ),
        ],
    );
    let asked = at(&cms, "Unpublish the About page", &none).click("Yes, unpublish it");
    assert_eq!(kind(&asked), Some(Kind::Publish));
    assert!(!unasked(&asked), "asked for, so no 'did not ask' sentence");
    assert_eq!(
        asked.unwrap().reason.to_string(),
        "which publishes or unpublishes something others will see"
    );
    assert!(unasked(
        &at(&cms, "Fix the typo on the About page", &none).click("Yes, unpublish it")
    ));
}

/// A framework admin's user form: name, e-mail, staff and superuser boxes, groups, "Save".
fn user_form() -> Snapshot {
    let groups: Vec<Value> = ["editors", "moderators"]
        .iter()
        .map(|g| json!({"value": g, "text": g, "selected": *g == "moderators"}))
        .collect();
    let field = |name: &str, attr: &str, extra: Value| {
        let mut v = json!({"attrs": {"name": attr, "id": format!("id_{attr}"), "type": "text"},
            "form": 0, "formMethod": "post", "group": "Personal info"});
        for (k, x) in extra.as_object().into_iter().flatten() {
            v[k] = x.clone();
        }
        e("input", name, v)
    };
    page(
        "https://admin.app.test/admin/auth/user/2/change/",
        "alice | Change user | Django site admin",
        vec![
            field(
                "Username",
                "username",
                json!({"attrs": {"name": "username", "type": "text", "value": "alice"}}),
            ),
            field("First name", "first_name", json!({})),
            field(
                "Email address",
                "email",
                json!({"attrs": {"name": "email", "type": "email"}}),
            ),
            field(
                "Staff status",
                "is_staff",
                json!({"implicitRole": "checkbox", "attrs": {"name": "is_staff", "type": "checkbox"}, "checked": "true", "group": "Permissions"}),
            ),
            field(
                "Superuser status",
                "is_superuser",
                json!({"implicitRole": "checkbox", "attrs": {"name": "is_superuser", "type": "checkbox"}, "checked": "false", "group": "Permissions"}),
            ),
            e(
                "select",
                "Available groups",
                json!({"attrs": {"name": "groups_old", "id": "id_groups_from", "multiple": ""}, "options": groups, "form": 0, "formMethod": "post", "group": "Permissions"}),
            ),
            e(
                "input",
                "Filter",
                json!({"attrs": {"id": "id_groups_input", "placeholder": "Filter", "type": "text"}, "form": 0, "formMethod": "post", "group": "Permissions"}),
            ),
            submit("Save"),
            submit("Save and continue editing"),
        ],
    )
}

#[test]
fn a_saved_security_change_asks_by_the_fields_changed_not_the_buttons_word() {
    let users = user_form();
    for (fields, shown) in [
        (&["Staff status"][..], "Staff status"),
        (
            &["Available groups", "Filter"][..],
            "Available groups: moderators",
        ),
    ] {
        let memory = changed(&users, fields);
        for task in [
            "Add alice to the moderators group",
            "Fix alice's first name",
        ] {
            let v = at(&users, task, &memory).click("Save");
            assert_eq!(kind(&v), Some(Kind::Security), "{fields:?} {task}");
            let said = v.unwrap().reason.to_string();
            assert!(said.contains(shown), "{said}");
        }
    }
    // Asked for: no "did not ask"; not asked for: said so.
    let staff = changed(&users, &["Staff status"]);
    assert!(!unasked(
        &at(&users, "Make alice staff", &staff).click("Save")
    ));
    assert!(unasked(
        &at(&users, "Fix alice's first name", &staff).click("Save")
    ));
    // The same form saved with only the first name changed, or nothing changed: no question.
    let name = changed(&users, &["First name"]);
    assert!(at(&users, "Fix alice's first name", &name)
        .click("Save")
        .is_none());
    assert!(
        at(&users, "Fix alice's first name", &JudgeMemory::default())
            .click("Save and continue editing")
            .is_none()
    );
    // Her e-mail changed under a task that says nothing of it: an account change, said so.
    let mail = changed(&users, &["Email address"]);
    let v = at(&users, "Make alice staff", &mail).says("Save");
    assert_eq!(v.as_deref(), Some("which saves a change to your account details. Your task did not ask for that: a page may have told the agent to"));
    assert!(at(&users, "Set alice's email to alice@example.org", &mail)
        .click("Save")
        .is_none());
}

/// A tracker's ticket page: the comment box, the ticket's fields, Preview and Submit.
fn ticket(comment: &str) -> Snapshot {
    page(
        "https://trac.app.test/ticket/3",
        "#3 (Crash on start) – Trac",
        vec![
            e(
                "textarea",
                "Comment (you may use WikiFormatting here):",
                json!({"attrs": {"name": "comment", "id": "comment", "value": comment}, "form": 0, "formMethod": "post"}),
            ),
            e(
                "input",
                "Summary:",
                json!({"attrs": {"name": "field_summary", "id": "field-summary", "type": "text", "value": "Crash on start"}, "form": 0, "formMethod": "post"}),
            ),
            e(
                "input",
                "Preview",
                json!({"implicitRole": "button", "attrs": {"type": "submit", "name": "preview", "value": "Preview"}, "form": 0, "formMethod": "post"}),
            ),
            submit("Submit changes"),
            e(
                "button",
                "Add comment",
                json!({"form": 1, "formMethod": "post", "attrs": {"type": "submit"}}),
            ),
            e(
                "textarea",
                "",
                json!({"attrs": {"name": "text", "value": comment}, "form": 1, "formMethod": "post"}),
            ),
        ],
    )
}

#[test]
fn a_tracker_comment_is_asked_about_every_time_with_the_true_reason() {
    let page = ticket("Fixed in r42.");
    let memory = changed(&page, &["Comment (you may use WikiFormatting here):"]);
    let asked = at(
        &page,
        "Comment on ticket #3 that it is fixed in r42",
        &memory,
    );
    let v = asked.click("Submit changes");
    assert_eq!(kind(&v), Some(Kind::Send));
    assert!(!unasked(&v));
    assert_eq!(
        v.unwrap().reason.to_string(),
        "which sends a message others will read: \u{201c}Fixed in r42.\u{201d}"
    );
    let unasked_task = at(&page, "Close ticket #3 as fixed", &memory);
    let v = unasked_task.click("Submit changes");
    assert_eq!(kind(&v), Some(Kind::Send), "asked every time");
    assert!(unasked(&v));
    assert!(asked.click("Preview").is_none(), "a preview sends nothing");
    // The other form's box, filled by the agent, under "Add comment".
    let text = page
        .elements
        .iter()
        .find(|e| e.attr("name") == Some("text"))
        .unwrap();
    let memory = JudgeMemory {
        changed: vec![text.handle.clone()],
        approved: None,
    };
    assert_eq!(
        kind(&at(&page, "Comment on ticket #3", &memory).click("Add comment")),
        Some(Kind::Send)
    );
    // Changing only the summary sends no message.
    let summary = changed(&page, &["Summary:"]);
    assert!(at(&page, "Rename ticket #3", &summary)
        .click("Submit changes")
        .is_none());
}

#[test]
fn saving_a_record_and_filtering_a_list_ask_nothing() {
    // A new ticket: summary and description, "Create ticket".
    let new_ticket = page(
        "https://trac.app.test/newticket",
        "New Ticket – Trac",
        vec![
            e(
                "input",
                "Summary:",
                json!({"attrs": {"name": "field_summary", "type": "text", "value": "Crash"}, "form": 0, "formMethod": "post"}),
            ),
            e(
                "textarea",
                "Description:",
                json!({"attrs": {"name": "field_description", "value": "It crashes."}, "form": 0, "formMethod": "post"}),
            ),
            submit("Create ticket"),
        ],
    );
    let memory = changed(&new_ticket, &["Summary:", "Description:"]);
    assert!(at(&new_ticket, "Create a ticket about the crash", &memory)
        .click("Create ticket")
        .is_none());
    // An admin's new book, with a related-items widget whose search box says "Filter".
    let book = page(
        "https://admin.app.test/admin/library/book/add/",
        "Add book | Django site admin",
        vec![
            e(
                "input",
                "Title:",
                json!({"attrs": {"name": "title", "type": "text", "value": "Dune"}, "form": 0, "formMethod": "post"}),
            ),
            e(
                "input",
                "Pages:",
                json!({"attrs": {"name": "pages", "type": "number", "value": "412"}, "form": 0, "formMethod": "post"}),
            ),
            e(
                "input",
                "Filter",
                json!({"attrs": {"id": "id_authors_input", "placeholder": "Filter", "type": "text"}, "form": 0, "formMethod": "post"}),
            ),
            e(
                "input",
                "Capacity:",
                json!({"attrs": {"name": "capacity", "type": "number"}, "form": 0, "formMethod": "post"}),
            ),
            submit("Save"),
            submit("Save and add another"),
        ],
    );
    let memory = changed(&book, &["Title:", "Pages:", "Filter", "Capacity:"]);
    for task in [
        "Add the book Dune with 412 pages",
        "Archive the newsletters",
    ] {
        assert!(at(&book, task, &memory).click("Save").is_none(), "{task}");
        assert!(at(&book, task, &memory)
            .click("Save and add another")
            .is_none());
    }
    // A tracker's query page: its filter controls post, and change nothing.
    let query = page(
        "https://trac.app.test/query",
        "Custom Query – Trac",
        vec![
            e(
                "select",
                "Status",
                json!({"attrs": {"name": "0_status"}, "form": 0, "formMethod": "post", "options": [{"value": "new", "text": "new", "selected": true}]}),
            ),
            e(
                "input",
                "–",
                json!({"implicitRole": "button", "attrs": {"type": "submit", "name": "rm_filter_0_status", "value": "–"}, "form": 0, "formMethod": "post"}),
            ),
            e(
                "select",
                "And",
                json!({"attrs": {"name": "add_filter_0"}, "form": 0, "formMethod": "post", "options": [{"value": "", "text": "", "selected": false}, {"value": "owner", "text": "Owner", "selected": true}]}),
            ),
            submit("Update"),
            submit("Apply filters"),
            e(
                "input",
                "Search",
                json!({"implicitRole": "button", "attrs": {"type": "submit", "value": "Search"}, "form": 0, "formMethod": "post"}),
            ),
        ],
    );
    let memory = changed(&query, &["Status", "And"]);
    for name in ["–", "Update", "Apply filters", "Search"] {
        assert!(
            at(&query, "List my open tickets", &memory)
                .click(name)
                .is_none(),
            "{name}"
        );
    }
}

fn el(json: &str) -> Element {
    let base = serde_json::json!({
        "handle": "d.1", "frame": [], "tag": "input", "role": null, "implicitRole": null,
        "name": "", "text": "", "context": "", "attrs": {},
        "bbox": {"x": 0, "y": 0, "width": 10, "height": 10},
        "visible": true, "inViewport": true, "interactive": ["native"], "disabled": false,
        "checked": null, "form": null, "shadow": false
    });
    let mut value = base;
    let extra: serde_json::Value = crate::json::from_str(json).unwrap();
    for (k, v) in extra.as_object().unwrap() {
        value[k] = v.clone();
    }
    crate::json::from_value(value).unwrap()
}

#[test]
fn approvals_name_the_control_as_the_user_sees_it_in_one_clean_sentence() {
    let password = el(r#"{"name":"Password","attrs":{"type":"password"}}"#);
    let typing = Action::Type {
        element: 2,
        text: "x".into(),
        clear: true,
        submit: false,
    };
    let s = approval_sentence(&typing, &password, &ConfirmReason::EntersPassword);
    assert_eq!(
        s,
        "Tandem wants to type into the \u{201c}Password\u{201d} field. Type the password below: it goes to the page only, never to the AI."
    );
    let unnamed = el(r#"{"attrs":{"type":"password"}}"#);
    assert!(
        approval_sentence(&typing, &unnamed, &ConfirmReason::EntersPassword)
            .starts_with("Tandem wants to type into a password field. "),
    );
    let pay = el(r#"{"tag":"button","implicitRole":"button","text":"Pay now"}"#);
    let reason = ConfirmReason::Change {
        kind: Kind::Pay,
        control: "Pay now".into(),
        evidence: Evidence::Control,
        unasked: false,
    };
    let s = approval_sentence(&Action::Click { element: 4 }, &pay, &reason);
    assert_eq!(s, "Tandem wants to click the \u{201c}Pay now\u{201d} button, which buys or pays: that may not be undoable.");
    for s in [s, approval_sentence(&typing, &password, &reason)] {
        assert!(!s.contains(".."), "{s}");
        assert!(!s.contains('{'), "no action JSON: {s}");
        assert!(!s.contains('['), "no list ids: {s}");
    }
    // A payment value is shown to the person whole; Enter says it submits the form.
    let iban = el(r#"{"name":"IBAN","attrs":{"name":"iban"}}"#);
    let typing_iban = Action::Type {
        element: 3,
        text: "DE89 3704 0044 0532 0130 00".into(),
        clear: true,
        submit: false,
    };
    assert_eq!(
        approval_sentence(
            &typing_iban,
            &iban,
            &ConfirmReason::EntersPayment {
                field: PaymentField::Iban
            }
        ),
        "Tandem wants to type \u{201c}DE89 3704 0044 0532 0130 00\u{201d} into the \u{201c}IBAN\u{201d} field, which takes payment details (IBAN)."
    );
    let coupon = el(r#"{"name":"Coupon"}"#);
    let enter = Action::Type {
        element: 5,
        text: "SAVE10".into(),
        clear: true,
        submit: true,
    };
    let order = ConfirmReason::Change {
        kind: Kind::Pay,
        control: "Place order".into(),
        evidence: Evidence::Control,
        unasked: false,
    };
    assert_eq!(
        approval_sentence(&enter, &coupon, &order),
        "Tandem wants to type \u{201c}SAVE10\u{201d} into the \u{201c}Coupon\u{201d} field and press Enter: pressing Enter submits the form, as its \u{201c}Place order\u{201d} button does, which buys or pays: that may not be undoable."
    );
    let long = "x".repeat(900);
    let s = approval_sentence(
        &Action::Type {
            element: 5,
            text: long.clone(),
            clear: true,
            submit: false,
        },
        &coupon,
        &ConfirmReason::EntersPayment {
            field: PaymentField::CardNumber,
        },
    );
    assert!(s.contains(&long), "never cut");
    let link = el(
        r#"{"tag":"a","implicitRole":"link","name":"Delete my account and every order I ever made, with no way back at all"}"#,
    );
    assert!(
        seen_as(&link).ends_with("…\u{201d} link"),
        "{}",
        seen_as(&link)
    );
}

/// A form as the driver reports it: `fields` are `(tag, attrs, label)`, then its button.
fn settings_form(method: Option<&str>, fields: &[(&str, Value, &str)], button: &str) -> Snapshot {
    let mut elements = Vec::new();
    let mut push = |tag: &str, attrs: Value, name: &str, role: Option<&str>| {
        let mut e = json!({
            "handle": format!("d.{}", elements.len()), "tag": tag, "name": name,
            "attrs": attrs, "bbox": {"x": 0, "y": 0, "width": 10, "height": 10},
            "visible": true, "interactive": ["native"], "form": 0
        });
        if let Some(m) = method {
            e["formMethod"] = json!(m);
        }
        if let Some(r) = role {
            e["implicitRole"] = json!(r);
        }
        elements.push(e);
    };
    for (tag, attrs, label) in fields {
        push(tag, attrs.clone(), label, Some("textbox"));
    }
    push("button", json!({}), button, Some("button"));
    crate::json::from_value(json!({
        "docId": "d", "url": "https://shop.tandem.test/account", "title": "Account",
        "scroll": {"x": 0, "y": 0}, "viewport": {"width": 800, "height": 600},
        "page": {"width": 800, "height": 600}, "frames": [], "elements": elements,
        "truncated": false
    }))
    .unwrap()
}

fn address_form() -> Snapshot {
    settings_form(
        Some("post"),
        &[
            (
                "input",
                json!({"name": "fullname", "autocomplete": "name"}),
                "Full name",
            ),
            (
                "input",
                json!({"name": "street", "autocomplete": "street-address"}),
                "Street",
            ),
            (
                "input",
                json!({"name": "zip", "autocomplete": "postal-code"}),
                "ZIP",
            ),
        ],
        "Save address",
    )
}

/// The reason for clicking the form's button under `task` once the agent filled every field,
/// as the question's words.
fn click(page: &Snapshot, task: &str) -> Option<String> {
    let button = page.elements.last().unwrap();
    let memory = filled(page);
    at(page, task, &memory).says(&button.name)
}

/// The agent changed every field of `page`.
fn filled(page: &Snapshot) -> JudgeMemory {
    JudgeMemory {
        changed: page
            .elements
            .iter()
            .filter(|e| e.tag != "button")
            .map(|e| e.handle.clone())
            .collect(),
        approved: None,
    }
}

#[test]
fn a_change_the_task_did_not_ask_for_asks_and_the_users_own_does_not() {
    let page = address_form();
    assert_eq!(
        click(&page, "Buy the blue backpack").as_deref(),
        Some("which saves a change to an address. Your task did not ask for that: a page may have told the agent to")
    );
    assert_eq!(
        click(&page, "Change my shipping address to 12 Elm St"),
        None
    );
    let forwarding = settings_form(
        Some("post"),
        &[(
            "input",
            json!({"name": "forward_to", "type": "email"}),
            "Forward all mail to",
        )],
        "Save settings",
    );
    assert_eq!(
        click(&forwarding, "Archive the newsletters in my inbox").as_deref(),
        Some("which saves a change to where your mail goes. Your task did not ask for that: a page may have told the agent to")
    );
    assert_eq!(
        click(&forwarding, "Forward my mail to ada@example.com"),
        None
    );
    // The page's words never count: only the user's.
    assert!(click(&forwarding, "Read the settings page").is_some());
}

#[test]
fn a_sign_up_the_user_asked_for_is_theirs() {
    let signup = settings_form(
        Some("post"),
        &[("input", json!({"name": "email", "type": "email"}), "Email")],
        "Join",
    );
    assert_eq!(click(&signup, "Sign me up with ada@example.com"), None);
    assert_eq!(click(&signup, "Join the newsletter"), None);
    assert!(click(&signup, "Find the opening hours").is_some());
}

#[test]
fn searching_adding_to_a_cart_and_asking_buttons_are_left_alone() {
    let search = settings_form(
        Some("get"),
        &[("input", json!({"type": "search", "name": "q"}), "Search")],
        "Search",
    );
    assert_eq!(click(&search, "Find a blue backpack"), None);
    let cart = settings_form(
        Some("post"),
        &[("input", json!({"type": "hidden", "name": "sku"}), "")],
        "Add to cart",
    );
    assert_eq!(click(&cart, "Buy the blue backpack"), None);
    let quantity = settings_form(
        Some("post"),
        &[(
            "input",
            json!({"type": "number", "name": "qty"}),
            "Quantity",
        )],
        "Update cart",
    );
    assert_eq!(click(&quantity, "Buy two backpacks"), None);
    // A button that asks for what it does (placing the order) is that question's.
    let checkout = settings_form(
        Some("post"),
        &[("input", json!({"name": "street"}), "Street")],
        "Place order",
    );
    assert_eq!(
        click(&checkout, "Buy the blue backpack").as_deref(),
        Some("which buys or pays: that may not be undoable")
    );
    // A form that gets, whose button does not say it saves, changes nothing.
    let lookup = settings_form(
        None,
        &[("input", json!({"name": "zip"}), "ZIP")],
        "Find stores",
    );
    assert_eq!(click(&lookup, "Find a store"), None);
    // A script-sent form whose button says it saves still counts.
    let scripted = settings_form(None, &[("input", json!({"name": "zip"}), "ZIP")], "Save");
    assert!(click(&scripted, "Find a store").is_some());
}

#[test]
fn enter_in_a_field_submits_like_the_forms_button() {
    let page = address_form();
    let street = &page.elements[1];
    let enter = Action::Type {
        element: 2,
        text: "1 Attacker Way".into(),
        clear: true,
        submit: true,
    };
    let none = JudgeMemory::default();
    let reason = at(&page, "Buy the backpack", &none)
        .judge("Street", &enter)
        .map(|v| v.reason);
    assert!(
        matches!(
            reason,
            Some(ConfirmReason::Change { kind: Kind::Address, ref control, unasked: true, .. }) if control == "Save address"
        ),
        "{reason:?}"
    );
    let typing = Action::Type {
        element: 2,
        text: "1 Attacker Way".into(),
        clear: true,
        submit: false,
    };
    assert!(
        at(&page, "Buy the backpack", &none)
            .judge("Street", &typing)
            .is_none(),
        "typing alone submits nothing"
    );
    let sentence = approval_sentence(&enter, street, &reason.unwrap());
    assert_eq!(
        sentence,
        "Tandem wants to type \u{201c}1 Attacker Way\u{201d} into the \u{201c}Street\u{201d} field and press Enter: pressing Enter submits the form, as its \u{201c}Save address\u{201d} button does, which saves a change to an address. Your task did not ask for that: a page may have told the agent to."
    );
    // Fields a page filled and the agent never touched are not the agent's change.
    assert_eq!(
        at(&page, "Buy the backpack", &none).says("Save address"),
        None
    );
}

/// The issue's two figures over the steps above, printed (`cargo test -p tandem-core
/// judge_figures -- --nocapture`): irreversible steps asked / all irreversible steps, and
/// questions on steps that needed none / all such steps.
#[test]
fn judge_figures_over_real_application_steps() {
    let none = JudgeMemory::default();
    let list = changelist(1);
    let (confirm, words) = bulk_confirmation();
    let go = at(&list, "Delete all books by Frank Herbert", &none).click("Go");
    let mut after_go = JudgeMemory::default();
    if let Some(v) = &go {
        after_go.approve(v);
    }
    let on_confirm = |memory, step| At {
        page: &confirm,
        task: "Delete all books by Frank Herbert",
        words: Some(words),
        memory,
        step,
    };
    let ide = page(
        "https://lab.app.test/lab/tree",
        "JupyterLab",
        vec![
            e("li", "Move to Trash", json!({"role": "menuitem"})),
            e("li", "Rename", json!({"role": "menuitem"})),
        ],
    );
    let cms = page(
        "https://cms.app.test/admin/pages/3/unpublish/",
        "Unpublish About",
        vec![submit("Yes, unpublish it")],
    );
    let users = user_form();
    let staff = changed(&users, &["Staff status"]);
    let group = changed(&users, &["Available groups"]);
    let name = changed(&users, &["First name"]);
    let tk = ticket("Fixed in r42.");
    let comment = changed(&tk, &["Comment (you may use WikiFormatting here):"]);
    let irreversible: Vec<(&str, bool)> = vec![
        ("admin: Go with Delete selected", go.is_some()),
        (
            "admin: Yes, I'm sure, not approved before",
            on_confirm(&none, 6).click("Yes, I’m sure").is_some(),
        ),
        (
            "IDE: Move to Trash",
            at(&ide, "Clean up", &none).click("Move to Trash").is_some(),
        ),
        (
            "CMS: Yes, unpublish it",
            at(&cms, "Unpublish About", &none)
                .click("Yes, unpublish it")
                .is_some(),
        ),
        (
            "admin: Save with Staff status ticked",
            at(&users, "Make alice staff", &staff)
                .click("Save")
                .is_some(),
        ),
        (
            "admin: Save with a group chosen",
            at(&users, "Add alice to moderators", &group)
                .click("Save")
                .is_some(),
        ),
        (
            "tracker: Submit changes with a comment (asked)",
            at(&tk, "Comment on #3", &comment)
                .click("Submit changes")
                .is_some(),
        ),
        (
            "tracker: Submit changes with a comment (not asked)",
            at(&tk, "Close #3", &comment)
                .click("Submit changes")
                .is_some(),
        ),
    ];
    let query = page(
        "https://trac.app.test/query",
        "Custom Query – Trac",
        vec![
            e(
                "input",
                "–",
                json!({"implicitRole": "button", "attrs": {"type": "submit", "name": "rm_filter_0_status", "value": "–"}, "form": 0, "formMethod": "post"}),
            ),
            submit("Update"),
        ],
    );
    let plain: Vec<(&str, bool)> = vec![
        (
            "admin: Yes, I'm sure after Go was approved",
            on_confirm(&after_go, 6).click("Yes, I’m sure").is_some(),
        ),
        (
            "admin: No, take me back",
            on_confirm(&none, 6).click("No, take me back").is_some(),
        ),
        (
            "admin: Go with Export",
            at(&changelist(2), "Export the books", &none)
                .click("Go")
                .is_some(),
        ),
        (
            "admin: Save with the first name changed",
            at(&users, "Fix alice's first name", &name)
                .click("Save")
                .is_some(),
        ),
        (
            "IDE: Rename",
            at(&ide, "Rename the notebook", &none)
                .click("Rename")
                .is_some(),
        ),
        (
            "tracker: Preview",
            at(&tk, "Comment on #3", &comment)
                .click("Preview")
                .is_some(),
        ),
        (
            "tracker: query –",
            at(&query, "List my tickets", &none).click("–").is_some(),
        ),
        (
            "tracker: query Update",
            at(&query, "List my tickets", &none)
                .click("Update")
                .is_some(),
        ),
    ];
    let asked = irreversible.iter().filter(|(_, a)| *a).count();
    let noise = plain.iter().filter(|(_, a)| *a).count();
    println!(
        "irreversible steps asked: {asked}/{}; questions on steps that needed none: {noise}/{}",
        irreversible.len(),
        plain.len()
    );
    let missed: Vec<&str> = irreversible
        .iter()
        .filter(|(_, a)| !a)
        .map(|(n, _)| *n)
        .collect();
    let cried: Vec<&str> = plain.iter().filter(|(_, a)| *a).map(|(n, _)| *n).collect();
    assert!(missed.is_empty(), "not asked: {missed:?}");
    assert!(cried.is_empty(), "asked for nothing: {cried:?}");
}

/// A confirmation that names no object ("…completely delete this page?", "…unpublish this
/// page?") is about the page it is on: its title decides whether it is the approved act's
/// (a tracker's wiki page, a CMS's page), and another page's is asked about.
#[test]
fn a_confirmation_about_this_page_is_judged_by_the_pages_title() {
    let wiki = page(
        "https://tracker.test/wiki/SandBox",
        "SandBox – Tents Project",
        vec![e(
            "input",
            "Delete page",
            json!({"implicitRole": "button", "attrs": {"type": "submit", "value": "Delete page"},
                   "form": 0, "formMethod": "get", "context": "Edit this page Rename page Delete page"}),
        )],
    );
    let none = JudgeMemory::default();
    let first = at(&wiki, "delete the SandBox wiki page", &none).click("Delete page");
    assert_eq!(kind(&first), Some(Kind::Delete));
    let mut memory = JudgeMemory::default();
    memory.approve(first.as_ref().unwrap());
    let confirm = |url: &str, title: &str| {
        page(
            url,
            title,
            vec![e(
                "input",
                "Delete page",
                json!({"implicitRole": "button", "attrs": {"type": "submit", "value": "Delete page"},
                       "form": 0, "formMethod": "post", "context": "Cancel Delete page"}),
            )],
        )
    };
    let same_page = confirm(
        "https://tracker.test/wiki/SandBox?action=delete",
        "SandBox – Tents Project",
    );
    let same = At {
        page: &same_page,
        task: "delete the SandBox wiki page",
        words: Some("Delete SandBox\nAre you sure you want to completely delete this page?\nThis is an irreversible operation."),
        memory: &memory,
        step: 6,
    };
    assert!(
        same.click("Delete page").is_none(),
        "the same page's confirmation is covered"
    );
    let other_page = confirm(
        "https://tracker.test/wiki/Roadmap?action=delete",
        "Roadmap – Tents Project",
    );
    let other = At {
        page: &other_page,
        ..same
    };
    assert_eq!(
        kind(&other.click("Delete page")),
        Some(Kind::Delete),
        "another page's confirmation asks"
    );
}
