// Weighted linear least squares with non-negative unknowns, for the few
// (two or three) parameters of a cost-model fit.
#pragma once

#include <vector>

namespace ddpscope::tuner::model {

// Minimises sum_i w_i (rows_i · x - y_i)^2 subject to x >= 0. Every row has
// the same length (the number of unknowns). An unknown whose column is all
// zero, or that would come out negative, is held at 0 (a physical time per
// message or per byte is never negative). Returns x.
std::vector<double> nonnegative_least_squares(const std::vector<std::vector<double>>& rows,
                                              const std::vector<double>& y,
                                              const std::vector<double>& weights);

}  // namespace ddpscope::tuner::model
