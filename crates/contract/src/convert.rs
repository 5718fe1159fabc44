//! Moves between the protobuf messages and the workload types (no copies of strings).

use crate::pb;
use callbench_workloads::{cars, echo, life, students, WorkloadError};

impl From<pb::CarMessage> for cars::CarMessage {
    fn from(m: pb::CarMessage) -> Self {
        cars::CarMessage {
            car: m.car.map(|c| cars::Car {
                make: c.make,
                model: c.model,
                trim: c.trim,
                color: c.color,
                year: c.year,
                mileage: c.mileage,
            }),
            driver: m.driver.map(|d| cars::Driver {
                firstname: d.firstname,
                lastname: d.lastname,
                driver_id: d.driver_id,
            }),
        }
    }
}

impl From<cars::CarMessage> for pb::CarMessage {
    fn from(m: cars::CarMessage) -> Self {
        use pb::car_message::{Car, Driver};
        pb::CarMessage {
            car: m.car.map(|c| Car {
                make: c.make,
                model: c.model,
                trim: c.trim,
                color: c.color,
                year: c.year,
                mileage: c.mileage,
            }),
            driver: m.driver.map(|d| Driver { firstname: d.firstname, lastname: d.lastname, driver_id: d.driver_id }),
        }
    }
}

impl From<life::Board> for pb::Board {
    fn from(b: life::Board) -> Self {
        pb::Board { board: b.board.into_iter().map(|life::Cell(x, y)| pb::Cell { x, y }).collect() }
    }
}

pub fn cells_from_pb(cells: &[pb::Cell]) -> Vec<life::Cell> {
    cells.iter().map(|c| life::Cell(c.x, c.y)).collect()
}

impl From<students::ListStudentsResponse> for pb::ListStudentsResponse {
    fn from(list: students::ListStudentsResponse) -> Self {
        let students = list
            .students
            .into_iter()
            .map(|s| pb::Student {
                id: s.id,
                first_name: s.first_name,
                last_name: s.last_name,
                email: s.email,
                age: s.age,
                gpa: s.gpa,
                enrolled: s.enrolled,
                major: s.major,
                courses: s.courses,
                address: s.address.map(|a| pb::Address {
                    street: a.street,
                    city: a.city,
                    state: a.state,
                    postal_code: a.postal_code,
                    country: a.country,
                }),
                enrollment_date: s.enrollment_date,
                phone: s.phone,
            })
            .collect();
        pb::ListStudentsResponse { students }
    }
}

/// Fails with INVALID_ARGUMENT on an enum number the contract does not define.
impl TryFrom<pb::EchoMessage> for echo::EchoMessage {
    type Error = WorkloadError;
    fn try_from(m: pb::EchoMessage) -> Result<Self, WorkloadError> {
        let records = m
            .records
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                let kind = echo::Kind::from_number(r.kind)
                    .ok_or_else(|| WorkloadError::invalid(format!("records[{i}].kind: unknown value {}", r.kind)))?;
                Ok(echo::Record {
                    id: r.id,
                    name: r.name,
                    score: r.score,
                    active: r.active,
                    kind,
                    location: r.location.map(|l| echo::Location {
                        city: l.city,
                        latitude: l.latitude,
                        longitude: l.longitude,
                    }),
                    tags: r.tags,
                    samples: r.samples,
                })
            })
            .collect::<Result<_, WorkloadError>>()?;
        Ok(echo::EchoMessage { records })
    }
}

impl From<echo::EchoMessage> for pb::EchoMessage {
    fn from(m: echo::EchoMessage) -> Self {
        let records = m
            .records
            .into_iter()
            .map(|r| pb::Record {
                id: r.id,
                name: r.name,
                score: r.score,
                active: r.active,
                kind: r.kind.number(),
                location: r.location.map(|l| pb::Location {
                    city: l.city,
                    latitude: l.latitude,
                    longitude: l.longitude,
                }),
                tags: r.tags,
                samples: r.samples,
            })
            .collect();
        pb::EchoMessage { records }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_round_trips_through_protobuf() {
        let m = echo::payload(3);
        let back: echo::EchoMessage = pb::EchoMessage::from(m.clone()).try_into().unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn unknown_enum_numbers_are_invalid() {
        let m = pb::EchoMessage { records: vec![pb::Record { kind: 9, ..Default::default() }] };
        assert!(echo::EchoMessage::try_from(m).is_err());
    }

    #[test]
    fn cars_round_trip_through_protobuf() {
        let m = cars::CarMessage {
            car: Some(cars::Car { make: "toyota".into(), model: "corolla".into(), year: 2012, ..Default::default() }),
            driver: Some(cars::Driver { driver_id: "someId".into(), ..Default::default() }),
        };
        assert_eq!(cars::CarMessage::from(pb::CarMessage::from(m.clone())), m);
    }
}
