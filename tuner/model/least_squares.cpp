#include "tuner/model/least_squares.h"

#include <cmath>
#include <stdexcept>

namespace ddpscope::tuner::model {
namespace {

// Solves the normal equations over the unknowns marked free (Gaussian
// elimination with partial pivoting). Columns are scaled to unit norm first:
// a per-message column (~1) and a per-byte column (~1e8) differ by orders of
// magnitude. Returns false when the free columns are linearly dependent.
bool solve_free(const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                const std::vector<double>& w, const std::vector<bool>& free,
                std::vector<double>* x) {
  std::vector<size_t> cols;
  for (size_t j = 0; j < free.size(); ++j)
    if (free[j]) cols.push_back(j);
  const size_t n = cols.size();
  std::vector<double> scale(n, 0);
  for (size_t a = 0; a < n; ++a) {
    for (size_t i = 0; i < rows.size(); ++i) scale[a] += w[i] * rows[i][cols[a]] * rows[i][cols[a]];
    scale[a] = std::sqrt(scale[a]);
    if (!(scale[a] > 0)) return false;
  }
  // Augmented normal matrix [A^T W A | A^T W y] in scaled columns.
  std::vector<std::vector<double>> m(n, std::vector<double>(n + 1, 0));
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t a = 0; a < n; ++a) {
      const double ra = rows[i][cols[a]] / scale[a];
      for (size_t b = 0; b < n; ++b) m[a][b] += w[i] * ra * rows[i][cols[b]] / scale[b];
      m[a][n] += w[i] * ra * y[i];
    }
  for (size_t c = 0; c < n; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < n; ++r)
      if (std::fabs(m[r][c]) > std::fabs(m[pivot][c])) pivot = r;
    if (std::fabs(m[pivot][c]) < 1e-10) return false;
    std::swap(m[c], m[pivot]);
    for (size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = m[r][c] / m[c][c];
      for (size_t k = c; k <= n; ++k) m[r][k] -= f * m[c][k];
    }
  }
  x->assign(free.size(), 0);
  for (size_t a = 0; a < n; ++a) (*x)[cols[a]] = m[a][n] / m[a][a] / scale[a];
  return true;
}

}  // namespace

std::vector<double> nonnegative_least_squares(const std::vector<std::vector<double>>& rows,
                                              const std::vector<double>& y,
                                              const std::vector<double>& weights) {
  if (rows.empty() || rows.size() != y.size() || y.size() != weights.size())
    throw std::invalid_argument("least squares: rows, targets and weights differ in number");
  const size_t n = rows[0].size();
  std::vector<bool> free(n, true);
  std::vector<double> x(n, 0);
  // Active set, the simple way for a handful of unknowns: solve over the free
  // ones; pin the most negative (or an undeterminable one) to 0; repeat.
  for (size_t round = 0; round <= n; ++round) {
    size_t nfree = 0;
    for (bool f : free) nfree += f;
    if (nfree == 0) break;
    if (!solve_free(rows, y, weights, free, &x)) {
      for (size_t j = n; j-- > 0;)  // drop the last free unknown: the least essential term
        if (free[j]) {
          free[j] = false;
          break;
        }
      continue;
    }
    size_t worst = n;
    for (size_t j = 0; j < n; ++j)
      if (free[j] && x[j] < 0 && (worst == n || x[j] < x[worst])) worst = j;
    if (worst == n) return x;
    free[worst] = false;
  }
  for (size_t j = 0; j < n; ++j)
    if (!free[j] || x[j] < 0) x[j] = 0;
  return x;
}

}  // namespace ddpscope::tuner::model
