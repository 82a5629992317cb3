//! RADIO and DISH at the pattern level (RFC 48, zmq_socket(3)'s draft types): a DISH joins
//! groups by JOIN/LEAVE commands up its pipes and keeps only what its groups carry; a RADIO
//! sends each message to the members of its group only, as two frames [group, body], dropping
//! (and counting) for a member at its HWM; a udp pipe takes every group.

use super::{Dish, Radio};
use crate::error::Error;
use crate::msg::Msg;
use crate::socket::harness::{parts, Bench, Parts};
use crate::socket::Pattern;
use zmtp::command::MAX_GROUP_LEN;

/// What a pipe from a DISH carries for a join or a leave: a COMMAND-flagged JOIN/LEAVE body.
fn command(m: &Msg) -> zmtp::Command {
    assert!(m.is_command(), "not a command frame: {m:?}");
    zmtp::Command::parse(m).expect("a command body")
}

fn joins(b: &mut Bench<Dish>, p: usize) -> Vec<zmtp::Command> {
    std::iter::from_fn(|| b.peer_recv_msgs(p)).map(|m| command(&m[0])).collect()
}

fn join_cmd(group: &str) -> zmtp::Command {
    zmtp::Command::Join(bytes::Bytes::copy_from_slice(group.as_bytes()))
}

fn radio_send(b: &mut Bench<Radio>, group: &[u8], body: &str) -> crate::error::Result<()> {
    b.pump();
    b.pattern.send_group(&mut b.pipes, group, &mut Msg::from(body))
}

/// A radio with a member per group list (peer `i` joined `groups[i]`).
fn radio(groups: &[&[&str]]) -> Bench<Radio> {
    let mut b = Bench::new(Radio::new());
    for gs in groups {
        let p = b.attach();
        for g in *gs {
            b.peer_send_msg(p, Dish::command(true, g.as_bytes()));
        }
    }
    b.pump();
    b
}

#[test]
fn dish_joins_and_leaves_by_command_up_every_pipe() {
    let mut b = Bench::new(Dish::new());
    let p = b.attach();
    b.pattern.join(&mut b.pipes, b"weather", true).unwrap();
    let q = b.attach();
    assert_eq!(joins(&mut b, p), [join_cmd("weather")]);
    assert_eq!(joins(&mut b, q), [join_cmd("weather")], "a new pipe is told the groups");
    assert_eq!(b.pattern.join(&mut b.pipes, b"weather", true), Err(Error::Invalid), "joined twice");
    assert_eq!(b.pattern.join(&mut b.pipes, b"other", false), Err(Error::Invalid), "left, never joined");
    let long = vec![b'g'; MAX_GROUP_LEN + 1];
    assert_eq!(b.pattern.join(&mut b.pipes, &long, true), Err(Error::Invalid));
    assert!(b.pattern.join(&mut b.pipes, &long[..MAX_GROUP_LEN], true).is_ok(), "255 bytes is allowed");
    let _ = joins(&mut b, p);
    b.pattern.join(&mut b.pipes, b"weather", false).unwrap();
    assert_eq!(joins(&mut b, p), [zmtp::Command::Leave(bytes::Bytes::from_static(b"weather"))]);
    assert_eq!(b.pattern.fanout(), Some((0, 1)));
    assert_eq!(b.send(&["x"]), Err(Error::NotSup));
}

#[test]
fn dish_sends_its_joins_again_after_a_reconnect() {
    let mut b = Bench::new(Dish::new());
    let p = b.attach();
    b.pattern.join(&mut b.pipes, b"a", true).unwrap();
    let _ = joins(&mut b, p);
    b.peer(p).hiccup();
    b.pump();
    assert_eq!(joins(&mut b, p), [join_cmd("a")]);
}

#[test]
fn dish_keeps_its_groups_and_drops_malformed_messages_counting_them() {
    let mut b = Bench::new(Dish::new());
    let p = b.attach();
    b.pattern.join(&mut b.pipes, b"g", true).unwrap();
    b.peer_send(p, &["other", "not joined"]);
    b.peer_send(p, &["lone frame"]);
    b.peer_send(p, &["g", "three", "frames"]);
    let long = "x".repeat(MAX_GROUP_LEN + 1);
    b.peer_send(p, &[&long, "group too long"]);
    b.peer_send(p, &["g", "kept"]);
    assert!(b.has_in());
    assert_eq!(b.recv(), Ok(parts(&["kept"])), "a single-part message for the application");
    assert_eq!(b.pattern.last_group().as_deref(), Some(&b"g"[..]));
    assert_eq!(b.recv(), Err(Error::Again));
    assert_eq!(b.pattern.drops().malformed, 3, "not joined is no malformation; the other three are");
}

#[test]
fn radio_sends_a_group_to_its_members_only() {
    let mut b = radio(&[&["a"], &["b"], &["a", "b"]]);
    radio_send(&mut b, b"a", "for a").unwrap();
    radio_send(&mut b, b"b", "for b").unwrap();
    radio_send(&mut b, b"c", "for nobody").unwrap();
    assert_eq!(b.peer_recv_all(0), [parts(&["a", "for a"])], "as [group, body] in the pipe");
    assert_eq!(b.peer_recv_all(1), [parts(&["b", "for b"])]);
    assert_eq!(b.peer_recv_all(2), [parts(&["a", "for a"]), parts(&["b", "for b"])]);
    assert_eq!(b.pattern.fanout(), Some((3, 2)), "three members, two groups");
    b.send(&["no group"]).unwrap();
    assert_eq!(b.peer_recv_all(0), Vec::<Parts>::new(), "a plain send is for the empty group's members");
}

#[test]
fn radio_stops_sending_after_a_leave_and_after_a_member_left() {
    let mut b = radio(&[&["a"], &["a"]]);
    b.peer_send_msg(0, Dish::command(false, b"a"));
    b.drop_peer(1);
    radio_send(&mut b, b"a", "x").unwrap();
    assert_eq!(b.peer_recv_all(0), Vec::<Parts>::new());
    assert!(!b.attached(1));
    assert_eq!(b.pattern.fanout(), Some((0, 0)), "no member, no group left");
}

#[test]
fn radio_refuses_multi_part_and_long_groups() {
    let mut b = radio(&[&["a"]]);
    assert_eq!(b.send(&["a", "b"]), Err(Error::Invalid));
    assert_eq!(radio_send(&mut b, &[b'g'; MAX_GROUP_LEN + 1], "x"), Err(Error::Invalid));
    assert_eq!(b.peer_recv_all(0), Vec::<Parts>::new());
    assert_eq!(b.recv(), Err(Error::NotSup));
}

#[test]
fn radio_drops_for_a_member_at_its_hwm_and_counts() {
    let mut b = Bench::new(Radio::new());
    let p = b.attach_with([1, 0], Some(b""), None);
    b.peer_send_msg(p, Dish::command(true, b"g"));
    for i in 0..3 {
        radio_send(&mut b, b"g", &i.to_string()).unwrap();
    }
    assert_eq!(b.peer_recv_all(p), [parts(&["g", "0"])]);
    assert_eq!(b.pattern.drops().hwm, 2);
}

#[test]
fn a_udp_pipe_takes_every_group() {
    let mut b = Bench::new(Radio::new());
    let udp = b.attach_with([0, 0], Some(b""), Some("udp://127.0.0.1:5555"));
    radio_send(&mut b, b"any", "x").unwrap();
    assert_eq!(b.peer_recv_all(udp), [parts(&["any", "x"])]);
}

#[test]
fn a_dish_and_a_radio_understand_each_other() {
    let (mut dish, mut radio) = (Bench::new(Dish::new()), Bench::new(Radio::new()));
    let (d, r) = (dish.attach(), radio.attach());
    dish.pattern.join(&mut dish.pipes, b"news", true).unwrap();
    while let Some(m) = dish.peer_recv_msgs(d) {
        m.into_iter().for_each(|f| radio.peer_send_msg(r, f));
    }
    radio_send(&mut radio, b"news", "headline").unwrap();
    radio_send(&mut radio, b"sport", "score").unwrap();
    while let Some(m) = radio.peer_recv_msgs(r) {
        m.into_iter().for_each(|f| dish.peer_send_msg(d, f));
    }
    assert_eq!(dish.recv(), Ok(parts(&["headline"])));
    assert_eq!(dish.recv(), Err(Error::Again));
}
