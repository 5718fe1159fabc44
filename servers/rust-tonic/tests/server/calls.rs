//! Every method of the contract through the generated tonic clients: the OK
//! answers and the documented errors.

use crate::common;

use callbench_contract::pb;
use callbench_contract::pb::{
    auth_client::AuthClient, cars_client::CarsClient, echo_client::EchoClient, life_client::LifeClient,
    students_client::StudentsClient,
};
use callbench_workloads::{auth::sha512_hex, echo, life, students};
use common::Server;
use tonic::Code;

fn auth_request(id: i64, password: &str) -> pb::AuthRequest {
    pb::AuthRequest { id, password: password.into() }
}

#[tokio::test]
async fn auth_hashes_the_password_of_a_known_user() {
    for mode in ["preloaded", "per-request"] {
        let server = Server::start_with(&["--mode", mode]);
        let mut client = AuthClient::new(server.channel().await);
        let reply = client.test(auth_request(9999, "thisispassword")).await.expect("OK").into_inner();
        assert_eq!(reply.hash, sha512_hex("thisispassword"), "{mode}");
        assert_eq!(reply.hash.len(), 128);

        for id in [0, -1, 10_001, i64::MAX] {
            let status = client.test(auth_request(id, "thisispassword")).await.expect_err("unknown user");
            assert_eq!(status.code(), Code::NotFound, "{mode} id {id}");
        }
        for password in [String::new(), "x".repeat(1025)] {
            let status = client.test(auth_request(1, &password)).await.expect_err("bad password");
            assert_eq!(status.code(), Code::InvalidArgument, "{mode} password of {} bytes", password.len());
        }
        let longest = "x".repeat(1024);
        assert_eq!(client.test(auth_request(1, &longest)).await.expect("OK").into_inner().hash, sha512_hex(&longest));
    }
}

#[tokio::test]
async fn students_are_the_two_records() {
    let server = Server::start();
    let mut client = StudentsClient::new(server.channel().await);
    let reply = client.list(pb::ListStudentsRequest {}).await.expect("OK").into_inner();
    assert_eq!(reply, pb::ListStudentsResponse::from(students::list()));
    assert_eq!(reply.students.len(), 2);
}

fn car_message() -> pb::CarMessage {
    use pb::car_message::{Car, Driver};
    pb::CarMessage {
        car: Some(Car {
            make: "toyota".into(),
            model: "corolla".into(),
            trim: "LE".into(),
            color: "blue".into(),
            year: 2012,
            mileage: 120_000,
        }),
        driver: Some(Driver { firstname: "Ada".into(), lastname: "Lovelace".into(), driver_id: "someId".into() }),
    }
}

#[tokio::test]
async fn cars_come_back_unchanged_or_invalid() {
    let server = Server::start();
    let mut client = CarsClient::new(server.channel().await);
    let message = car_message();
    assert_eq!(client.send(message.clone()).await.expect("OK").into_inner(), message);

    let no_driver = pb::CarMessage { driver: None, ..car_message() };
    let no_car = pb::CarMessage { car: None, ..car_message() };
    let mut too_old = car_message();
    too_old.car.as_mut().expect("a car").year = 1885;
    let mut long_make = car_message();
    long_make.car.as_mut().expect("a car").make = "m".repeat(257);
    for (name, bad) in [("no driver", no_driver), ("no car", no_car), ("year 1885", too_old), ("long make", long_make)]
    {
        let status = client.send(bad).await.expect_err(name);
        assert_eq!(status.code(), Code::InvalidArgument, "{name}");
    }
}

fn cells(pairs: &[(i64, i64)]) -> Vec<pb::Cell> {
    pairs.iter().map(|&(x, y)| pb::Cell { x, y }).collect()
}

#[tokio::test]
async fn life_sets_up_the_acorn_and_steps_a_blinker() {
    let server = Server::start();
    let mut client = LifeClient::new(server.channel().await);
    let acorn = client.setup(pb::SetupRequest {}).await.expect("OK").into_inner();
    assert_eq!(acorn, pb::Board::from(life::setup()));
    assert_eq!(acorn.board.len(), 7);

    let horizontal = cells(&[(0, 1), (1, 1), (2, 1)]);
    let vertical = cells(&[(1, 0), (1, 1), (1, 2)]);
    let step = |ntimes, board: &Vec<pb::Cell>| pb::StepRequest { ntimes, board: board.clone() };
    assert_eq!(client.step(step(1, &horizontal)).await.expect("OK").into_inner().board, vertical);
    assert_eq!(client.step(step(2, &horizontal)).await.expect("OK").into_inner().board, horizontal);
    // Duplicated input cells count once.
    let doubled = [horizontal.clone(), horizontal.clone()].concat();
    assert_eq!(client.step(step(1, &doubled)).await.expect("OK").into_inner().board, vertical);

    for (name, bad) in [
        ("ntimes 0", step(0, &horizontal)),
        ("ntimes 1001", step(1001, &horizontal)),
        ("far cell", step(1, &cells(&[(1_000_000_001, 0)]))),
    ] {
        let status = client.step(bad).await.expect_err(name);
        assert_eq!(status.code(), Code::InvalidArgument, "{name}");
    }
}

#[tokio::test]
async fn echo_returns_the_message_or_refuses_bad_numbers() {
    let server = Server::start();
    let mut client = EchoClient::new(server.channel().await);
    let message = pb::EchoMessage::from(echo::payload(3));
    assert_eq!(client.echo(message.clone()).await.expect("OK").into_inner(), message);
    let empty = pb::EchoMessage::default();
    assert_eq!(client.echo(empty.clone()).await.expect("OK").into_inner(), empty);

    let mut nan = message.clone();
    nan.records[0].score = f64::NAN;
    let mut unknown_kind = message.clone();
    unknown_kind.records[1].kind = 9;
    let mut infinite_latitude = message;
    infinite_latitude.records[2].location.as_mut().expect("a location").latitude = f64::INFINITY;
    for (name, bad) in [("NaN score", nan), ("unknown kind", unknown_kind), ("infinite latitude", infinite_latitude)] {
        let status = client.echo(bad).await.expect_err(name);
        assert_eq!(status.code(), Code::InvalidArgument, "{name}");
    }
}
