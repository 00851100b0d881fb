use super::*;

#[test]
fn mad_is_the_median_of_absolute_deviations() {
    assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 100.0]), Some(1.0));
    assert_eq!(mad(&[5.0, 5.0, 5.0]), Some(0.0));
    assert_eq!(mad(&[]), None);
    assert_eq!(mad(&[1.0, f64::NAN]), None);
    // One wild value barely moves it (the standard deviation it is not).
    let a = mad(&[1.0, 1.1, 0.9, 1.05, 0.95]).unwrap();
    let b = mad(&[1.0, 1.1, 0.9, 1.05, 1e9]).unwrap();
    assert!((a - b).abs() < 0.06, "{a} {b}");
}

#[test]
fn robust_z_divides_by_the_scaled_mad_with_a_floor() {
    // Peers 1..=5: median 3, MAD 1, scale 1.4826.
    let z = robust_z(10.0, &[1.0, 2.0, 3.0, 4.0, 5.0], 0.0).unwrap();
    assert!((z - 7.0 / 1.4826).abs() < 1e-9, "{z}");
    // Identical peers: the floor is the scale.
    assert_eq!(robust_z(0.5, &[0.0, 0.0, 0.0], 0.1), Some(5.0));
    assert_eq!(robust_z(0.5, &[0.0, 0.0, 0.0], 0.0), None);
    assert_eq!(robust_z(0.5, &[], 0.1), None);
}

#[test]
fn the_sign_tests_tail_is_the_binomials() {
    assert_eq!(sign_test_p(0, 10), 1.0);
    assert_eq!(sign_test_p(11, 10), 0.0);
    // 5 of 5: 1/32; 4 or more of 5: 6/32; 3 or more of 4: 5/16.
    assert!((sign_test_p(5, 5) - 1.0 / 32.0).abs() < 1e-12);
    assert!((sign_test_p(4, 5) - 6.0 / 32.0).abs() < 1e-12);
    assert!((sign_test_p(3, 4) - 5.0 / 16.0).abs() < 1e-12);
    // Half or more of an even n is a little over ½.
    assert!((sign_test_p(10, 20) - 0.588_098_526_000_976_6).abs() < 1e-12);
    // A large n does not overflow: 2000 of 3000 is far in the tail.
    let p = sign_test_p(2000, 3000);
    assert!((p / 5.045_074_313_970_67e-76 - 1.0).abs() < 1e-9, "{p}");
    assert!((sign_test_p(1, 3000) - 1.0).abs() < 1e-9);
}
