// scripts/fit_erfc.cc: how the g polynomials of src/cpu/kernels/erfc_f32.h were made (not
// built with the project). g(x) = erfc(x) exp(x^2) is interpolated at N Chebyshev nodes in long
// double (glibc erfcl/expl), converted to monomial coefficients in t in [-1, 1], rounded to
// double; the program prints the largest relative error of the double polynomial over 200001
// points and, with a 4th argument, the coefficients as hex floats.
//   g++ -O2 -o /tmp/fit scripts/fit_erfc.cc
//   /tmp/fit 1 3 14 print                                       # kNear: t = x - 2 on [1, 3]
//   INV=1 /tmp/fit 0.09090909090909090909 0.33333333333333333333 12 print   # kFar: u = 1/x
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
typedef long double LD;
int INV = 0;
LD g0(LD x) { return erfcl(x) * expl(x * x); }
LD g(LD u) { return INV ? g0(1 / u) : g0(u); }
// Chebyshev interpolation of f on [a,b] with N nodes -> monomial coefficients in t in [-1,1]
std::vector<LD> fit(LD a, LD b, int N) {
  std::vector<LD> c(N, 0);
  for (int j = 0; j < N; ++j) {
    LD s = 0;
    for (int k = 0; k < N; ++k) {
      LD th = M_PIl * (k + 0.5L) / N;
      LD t = cosl(th);
      s += g((a + b) / 2 + (b - a) / 2 * t) * cosl(j * th);
    }
    c[j] = s * 2 / N;
  }
  c[0] /= 2;
  // convert chebyshev -> monomial
  std::vector<std::vector<LD>> T(N, std::vector<LD>(N, 0));
  T[0][0] = 1;
  if (N > 1)
    T[1][1] = 1;
  for (int n = 2; n < N; ++n)
    for (int i = 0; i < N; ++i) {
      T[n][i] = -T[n - 2][i] + (i ? 2 * T[n - 1][i - 1] : 0);
    }
  std::vector<LD> m(N, 0);
  for (int n = 0; n < N; ++n)
    for (int i = 0; i < N; ++i)
      m[i] += c[n] * T[n][i];
  return m;
}
int main(int argc, char **argv) {
  INV = getenv("INV") != nullptr;
  LD a = atof(argv[1]), b = atof(argv[2]);
  int N = atoi(argv[3]);
  auto m = fit(a, b, N);
  std::vector<double> md(m.begin(), m.end());
  double maxrel = 0;
  for (int i = 0; i <= 200000; ++i) {
    LD x = a + (b - a) * i / 200000.0L;
    double t = (double)((x - (a + b) / 2) / ((b - a) / 2));
    double p = 0;
    for (int j = N - 1; j >= 0; --j)
      p = p * t + md[j];
    double rel = fabs((p - (double)g(x)) / (double)g(x));
    if (rel > maxrel)
      maxrel = rel;
  }
  printf("[%Lg,%Lg] N=%d maxrel=%g\n", a, b, N, maxrel);
  if (argc > 4)
    for (int j = 0; j < N; ++j)
      printf("    %a,\n", md[j]);
}
