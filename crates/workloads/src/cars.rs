//! Seed 003's cars workload: validate the car + driver message and echo it.

use crate::error::{Result, WorkloadError};
use crate::limits::{MAX_CAR_YEAR, MAX_MILEAGE, MAX_STRING_BYTES, MIN_CAR_YEAR};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Car {
    pub make: String,
    pub model: String,
    pub trim: String,
    pub color: String,
    pub year: u32,
    pub mileage: u32,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Driver {
    pub firstname: String,
    pub lastname: String,
    #[serde(rename = "driverId")]
    pub driver_id: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct CarMessage {
    pub car: Option<Car>,
    pub driver: Option<Driver>,
}

/// Checks the message and gives it back unchanged.
pub fn send(message: CarMessage) -> Result<CarMessage> {
    validate(&message)?;
    Ok(message)
}

pub fn validate(message: &CarMessage) -> Result<()> {
    let car = message.car.as_ref().ok_or_else(|| WorkloadError::invalid("car is required"))?;
    let driver = message.driver.as_ref().ok_or_else(|| WorkloadError::invalid("driver is required"))?;
    if car.make.is_empty() || car.model.is_empty() {
        return Err(WorkloadError::invalid("car.make and car.model are required"));
    }
    let strings =
        [&car.make, &car.model, &car.trim, &car.color, &driver.firstname, &driver.lastname, &driver.driver_id];
    if strings.iter().any(|s| s.len() > MAX_STRING_BYTES) {
        return Err(WorkloadError::invalid(format!("strings are limited to {MAX_STRING_BYTES} bytes")));
    }
    if !(MIN_CAR_YEAR..=MAX_CAR_YEAR).contains(&car.year) {
        return Err(WorkloadError::invalid(format!("car.year must be in {MIN_CAR_YEAR}..{MAX_CAR_YEAR}")));
    }
    if car.mileage > MAX_MILEAGE {
        return Err(WorkloadError::invalid(format!("car.mileage must be at most {MAX_MILEAGE}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seed_message() -> CarMessage {
        serde_json::from_str(
            r#"{"car":{"make":"toyota","model":"corolla","trim":"4DR Sedan","color":"gray","year":2012,"mileage":120000},
                "driver":{"firstname":"John","lastname":"Smith","driverId":"someId"}}"#,
        )
        .unwrap()
    }

    #[test]
    fn echoes_the_seed_message() {
        let m = seed_message();
        assert_eq!(send(m.clone()).unwrap(), m);
    }

    #[test]
    fn rejects_what_the_contract_rejects() {
        let mut m = seed_message();
        m.car.as_mut().unwrap().year = 1800;
        assert!(send(m).is_err());
        let mut m = seed_message();
        m.driver = None;
        assert!(send(m).is_err());
        let mut m = seed_message();
        m.car.as_mut().unwrap().make = "x".repeat(MAX_STRING_BYTES + 1);
        assert!(send(m).is_err());
        let mut m = seed_message();
        m.car.as_mut().unwrap().mileage = MAX_MILEAGE + 1;
        assert!(send(m).is_err());
    }
}
