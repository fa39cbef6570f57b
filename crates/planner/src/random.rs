//! The few distributions the simulation draws from, on a seeded generator so
//! that a run is reproducible from its seed.

use fastrand::Rng;

/// A draw from Poisson(`mean`): Knuth's product method for small means, the
/// normal approximation (rounded, never negative) above 30.
pub fn poisson(rng: &mut Rng, mean: f64) -> u32 {
    if mean <= 0.0 || !mean.is_finite() {
        return 0;
    }
    if mean > 30.0 {
        let draw = mean + mean.sqrt() * standard_normal(rng);
        return draw.round().max(0.0) as u32;
    }
    let limit = (-mean).exp();
    let mut product = rng.f64();
    let mut count = 0;
    while product > limit {
        count += 1;
        product *= rng.f64();
    }
    count
}

/// A standard normal draw (Box–Muller).
pub fn standard_normal(rng: &mut Rng) -> f64 {
    let u1 = 1.0 - rng.f64(); // (0, 1]: ln never sees 0
    let u2 = rng.f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// How long one message takes to process, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ServiceTime {
    /// Always the same.
    Fixed(f64),
    /// Exponential with this mean.
    Exponential(f64),
    /// Log-normal with this mean and coefficient of variation: a long tail.
    LogNormal {
        /// Mean seconds.
        mean: f64,
        /// Standard deviation ÷ mean.
        cv: f64,
    },
}

impl ServiceTime {
    /// The mean, in seconds.
    pub fn mean(self) -> f64 {
        match self {
            Self::Fixed(mean) | Self::Exponential(mean) | Self::LogNormal { mean, .. } => mean,
        }
    }

    /// The same shape, `factor` × as long.
    pub fn scaled(self, factor: f64) -> Self {
        match self {
            Self::Fixed(mean) => Self::Fixed(mean * factor),
            Self::Exponential(mean) => Self::Exponential(mean * factor),
            Self::LogNormal { mean, cv } => Self::LogNormal { mean: mean * factor, cv },
        }
    }

    /// One draw, at least a millisecond so that a slot always moves on.
    pub fn draw(self, rng: &mut Rng) -> f64 {
        let seconds = match self {
            Self::Fixed(mean) => mean,
            Self::Exponential(mean) => -mean * (1.0 - rng.f64()).ln(),
            Self::LogNormal { mean, cv } => {
                let sigma2 = (1.0 + cv * cv).ln();
                let mu = mean.ln() - sigma2 / 2.0;
                (mu + sigma2.sqrt() * standard_normal(rng)).exp()
            }
        };
        seconds.max(0.001)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_of(n: usize, mut draw: impl FnMut() -> f64) -> f64 {
        (0..n).map(|_| draw()).sum::<f64>() / n as f64
    }

    #[test]
    fn poisson_means_match_in_both_regimes() {
        let mut rng = Rng::with_seed(1);
        for mean in [0.01, 0.5, 4.0, 29.0, 31.0, 400.0] {
            let got = mean_of(40_000, || f64::from(poisson(&mut rng, mean)));
            assert!((got - mean).abs() < 0.03 * mean + 0.01, "mean {mean}: got {got}");
        }
        assert_eq!(poisson(&mut rng, 0.0), 0);
        assert_eq!(poisson(&mut rng, f64::NAN), 0);
    }

    #[test]
    fn service_time_means_match() {
        let mut rng = Rng::with_seed(2);
        for service in [
            ServiceTime::Fixed(0.2),
            ServiceTime::Exponential(1.5),
            ServiceTime::LogNormal { mean: 2.0, cv: 1.5 },
        ] {
            let got = mean_of(200_000, || service.draw(&mut rng));
            let want = service.mean();
            assert!((got - want).abs() < 0.05 * want, "{service:?}: got {got}");
        }
    }
}
