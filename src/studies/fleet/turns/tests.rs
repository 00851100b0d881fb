use super::*;

#[test]
fn a_message_is_read_back_and_anything_else_is_named() {
    assert_eq!(
        read(&message(Err(Failure::run("no pipe")))).unwrap_err(),
        "its run failed: no pipe"
    );
    assert!(read(b"").unwrap_err().contains("not a report"));
    assert!(read(b"R{").unwrap_err().contains("not JSON"));
    assert!(
        read(br#"R{"schema": "ipcmark.other/1"}"#)
            .unwrap_err()
            .contains("cannot be read")
    );
}

#[test]
fn the_stop_line_names_what_the_history_kept() {
    let turn = |rank, stored| Turn {
        rank,
        host: "h".into(),
        stored,
        figures: None,
    };
    assert_eq!(kept(&[]), "nothing kept in the history");
    assert_eq!(
        kept(&[turn(0, Ok(4)), turn(1, Err("x".into())), turn(2, Ok(5))]),
        "kept in the history: rank 0's run (id 4), rank 2's run (id 5)"
    );
}
