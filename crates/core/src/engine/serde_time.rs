//! serde for [`SimTime`] as integer milliseconds, so engine inputs and reports serialise.
//! (`SimTime` itself carries no serde derive; the wire types use `sim_time_ms`.)

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::time::SimTime;

impl Serialize for SimTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.as_ms())
    }
}

impl<'de> Deserialize<'de> for SimTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SimTime, D::Error> {
        u64::deserialize(d).map(SimTime::from_ms)
    }
}
