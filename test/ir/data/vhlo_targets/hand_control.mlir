// hand_control: control flow and the ops around it, hand-written for the VHLO target
// test data (README.md beside this file). Covers stablehlo.while, if, case, a
// two-operand sort with a TOTALORDER comparator, a two-operand reduce (argmax), a
// one-operand reduce in the pretty `applies` form, compare with and without a
// compare_type (SIGNED, UNSIGNED, FLOAT, TOTALORDER, none), select, iota, convert, and
// a private function called with func.call from inside a while body and from main.
// Every op here exists in VHLO from 0.9.0 on.
module @hand_control {
  func.func public @main(%x: tensor<4x8xf32>, %k: tensor<ui32>, %n: tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>, tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<4x8xi1>, tensor<4x8xf32>) {
    // while: n times acc = step(acc)
    %c0 = stablehlo.constant dense<0> : tensor<i64>
    %w:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i64>, tensor<4x8xf32>
      cond {
        %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
        stablehlo.return %lt : tensor<i1>
      } do {
        %one = stablehlo.constant dense<1> : tensor<i64>
        %inext = stablehlo.add %i, %one : tensor<i64>
        %anext = func.call @step(%acc) : (tensor<4x8xf32>) -> tensor<4x8xf32>
        stablehlo.return %inext, %anext : tensor<i64>, tensor<4x8xf32>
      }
    // if on an unsigned comparison
    %five = stablehlo.constant dense<5> : tensor<ui32>
    %p = stablehlo.compare GE, %k, %five, UNSIGNED : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
    %if = "stablehlo.if"(%p) ({
      %e = stablehlo.exponential %x : tensor<4x8xf32>
      stablehlo.return %e : tensor<4x8xf32>
    }, {
      %l = stablehlo.log_plus_one %x : tensor<4x8xf32>
      stablehlo.return %l : tensor<4x8xf32>
    }) : (tensor<i1>) -> tensor<4x8xf32>
    // case with three branches on an i32 index (out of range picks the last branch)
    %ki = stablehlo.convert %k : (tensor<ui32>) -> tensor<i32>
    %case = "stablehlo.case"(%ki) ({
      %s = stablehlo.sine %x : tensor<4x8xf32>
      stablehlo.return %s : tensor<4x8xf32>
    }, {
      %c = stablehlo.cosine %x : tensor<4x8xf32>
      stablehlo.return %c : tensor<4x8xf32>
    }, {
      %a = stablehlo.abs %x : tensor<4x8xf32>
      stablehlo.return %a : tensor<4x8xf32>
    }) : (tensor<i32>) -> tensor<4x8xf32>
    // sort x descending along dim 1, carrying the iota indices along
    %iota = stablehlo.iota dim = 1 : tensor<4x8xi32>
    %sorted:2 = "stablehlo.sort"(%x, %iota) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %ia: tensor<i32>, %ib: tensor<i32>):
      %gt = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %gt : tensor<i1>
    }) : (tensor<4x8xf32>, tensor<4x8xi32>) -> (tensor<4x8xf32>, tensor<4x8xi32>)
    // two-operand reduce: max and argmax along dim 1
    %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %r:2 = stablehlo.reduce(%x init: %ninf), (%iota init: %zero) across dimensions = [1] : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
     reducer(%a: tensor<f32>, %b: tensor<f32>) (%ia: tensor<i32>, %ib: tensor<i32>) {
      %ge = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %m = stablehlo.select %ge, %a, %b : tensor<i1>, tensor<f32>
      %mi = stablehlo.select %ge, %ia, %ib : tensor<i1>, tensor<i32>
      stablehlo.return %m, %mi : tensor<f32>, tensor<i32>
    }
    // one-operand reduce over both dimensions
    %all = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
    // compare with no compare_type, then an elementwise select
    %mask = stablehlo.compare EQ, %x, %sorted#0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
    %sel = stablehlo.select %mask, %if, %case : tensor<4x8xi1>, tensor<4x8xf32>
    %stepped = call @step(%sel) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    return %w#1, %if, %case, %sorted#0, %sorted#1, %r#0, %r#1, %all, %mask, %stepped : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>, tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<4x8xi1>, tensor<4x8xf32>
  }
  // acc * 0.5 + 1
  func.func private @step(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %h = stablehlo.constant dense<5.000000e-01> : tensor<4x8xf32>
    %one = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %oneb = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %m = stablehlo.multiply %a, %h : tensor<4x8xf32>
    %s = stablehlo.add %m, %oneb : tensor<4x8xf32>
    return %s : tensor<4x8xf32>
  }
}
