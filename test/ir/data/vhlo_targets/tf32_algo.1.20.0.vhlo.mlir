#loc2 = loc("-":2:26)
#loc3 = loc("-":2:51)
"builtin.module"() <{sym_name = "jit_fwd"}> ({
  "vhlo.func_v1"() <{arg_attrs = #vhlo.array_v1<[]>, function_type = #vhlo.type_v1<!vhlo.func_v1<(!vhlo.tensor_v1<1x64x!vhlo.f32_v1>, !vhlo.tensor_v1<64x64x!vhlo.f32_v1>) -> !vhlo.tensor_v1<1x64x!vhlo.f32_v1>, !vhlo.tensor_v1<1x64x!vhlo.f32_v1>>>, res_attrs = #vhlo.array_v1<[#vhlo.dict_v1<{#vhlo.string_v1<"jax.result_info"> = #vhlo.string_v1<"result[0]">}>, #vhlo.dict_v1<{#vhlo.string_v1<"jax.result_info"> = #vhlo.string_v1<"result[1]">}>]>, sym_name = #vhlo.string_v1<"main">, sym_visibility = #vhlo.string_v1<"public">}> ({
  ^bb0(%arg0: !vhlo.tensor_v1<1x64x!vhlo.f32_v1> loc("-":2:26), %arg1: !vhlo.tensor_v1<64x64x!vhlo.f32_v1> loc("-":2:51)):
    %0 = "vhlo.dot_general_v2"(%arg0, %arg1) <{accumulation_type = #vhlo.type_v1<!vhlo.f32_v1>, allow_imprecise_accumulation = #vhlo.bool_v1<false>, lhs_batching_dimensions = #vhlo.tensor_v1<dense<> : tensor<0xi64>>, lhs_component_count = #vhlo.integer_v1<1 : i64>, lhs_contracting_dimensions = #vhlo.tensor_v1<dense<1> : tensor<1xi64>>, lhs_precision_type = #vhlo.type_v1<!vhlo.tf31_v1>, num_primitive_operations = #vhlo.integer_v1<1 : i64>, precision_config = #vhlo.array_v1<[#vhlo<precision_v1 DEFAULT>, #vhlo<precision_v1 DEFAULT>]>, rhs_batching_dimensions = #vhlo.tensor_v1<dense<> : tensor<0xi64>>, rhs_component_count = #vhlo.integer_v1<1 : i64>, rhs_contracting_dimensions = #vhlo.tensor_v1<dense<0> : tensor<1xi64>>, rhs_precision_type = #vhlo.type_v1<!vhlo.tf31_v1>}> : (!vhlo.tensor_v1<1x64x!vhlo.f32_v1>, !vhlo.tensor_v1<64x64x!vhlo.f32_v1>) -> !vhlo.tensor_v1<1x64x!vhlo.f32_v1> loc(#loc4)
    %1 = "vhlo.dot_general_v2"(%arg0, %arg1) <{accumulation_type = #vhlo.type_v1<!vhlo.none_v1>, allow_imprecise_accumulation = #vhlo.type_v1<!vhlo.none_v1>, lhs_batching_dimensions = #vhlo.tensor_v1<dense<> : tensor<0xi64>>, lhs_component_count = #vhlo.type_v1<!vhlo.none_v1>, lhs_contracting_dimensions = #vhlo.tensor_v1<dense<1> : tensor<1xi64>>, lhs_precision_type = #vhlo.type_v1<!vhlo.none_v1>, num_primitive_operations = #vhlo.type_v1<!vhlo.none_v1>, precision_config = #vhlo.array_v1<[#vhlo<precision_v1 DEFAULT>, #vhlo<precision_v1 DEFAULT>]>, rhs_batching_dimensions = #vhlo.tensor_v1<dense<> : tensor<0xi64>>, rhs_component_count = #vhlo.type_v1<!vhlo.none_v1>, rhs_contracting_dimensions = #vhlo.tensor_v1<dense<0> : tensor<1xi64>>, rhs_precision_type = #vhlo.type_v1<!vhlo.none_v1>}> : (!vhlo.tensor_v1<1x64x!vhlo.f32_v1>, !vhlo.tensor_v1<64x64x!vhlo.f32_v1>) -> !vhlo.tensor_v1<1x64x!vhlo.f32_v1> loc(#loc5)
    "vhlo.return_v1"(%0, %1) : (!vhlo.tensor_v1<1x64x!vhlo.f32_v1>, !vhlo.tensor_v1<1x64x!vhlo.f32_v1>) -> () loc(#loc6)
  }) : () -> () loc(#loc1)
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> () loc(#loc)
#loc = loc("-":1:1)
#loc1 = loc("-":2:3)
#loc4 = loc("-":3:10)
#loc5 = loc("-":4:10)
#loc6 = loc("-":5:5)
