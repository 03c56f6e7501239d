// The object that carries the tests' shared precompiled header (tests/CMakeLists.txt): the
// tests that see LibTorch reuse it instead of parsing ATen's headers once each.
int trainscope_test_pch_anchor() { return 0; }
