-- gpu_sum: sum() semantics with exact integer and exactly rounded real totals.
-- Constants: INT64_MAX = 9223372036854775807, DBL_MAX = ieee754(9007199254740991, 971),
-- 0.1 = ieee754(3602879701896397, -55), smallest subnormal = ieee754(1, -1074).

-- (1) integers: exact INTEGER total
select 'sum_int_basic', gpu_sum(x) = 6 and typeof(gpu_sum(x)) = 'integer' from (select column1 x from (values (1),(2),(3)));
select 'sum_int_negative', gpu_sum(x) = -4 and typeof(gpu_sum(x)) = 'integer' from (select column1 x from (values (-7),(2),(1)));
select 'sum_int_single', gpu_sum(x) = 42 and typeof(gpu_sum(x)) = 'integer' from (select column1 x from (values (42)));
select 'sum_int_zero', gpu_sum(x) = 0 and typeof(gpu_sum(x)) = 'integer' from (select column1 x from (values (0),(0)));
select 'sum_int_with_nulls', gpu_sum(x) = 3 and typeof(gpu_sum(x)) = 'integer' from (select column1 x from (values (1),(NULL),(2),(NULL)));
select 'sum_int64_max', gpu_sum(x) = 9223372036854775807 and typeof(gpu_sum(x)) = 'integer' from (select column1 x from (values (9223372036854775807),(0)));
select 'sum_int64_min', gpu_sum(x) = -9223372036854775808 and typeof(gpu_sum(x)) = 'integer' from (select column1 x from (values (-9223372036854775807),(-1)));
select 'sum_int64_max_plus_min', gpu_sum(x) = -1 and typeof(gpu_sum(x)) = 'integer' from (select column1 x from (values (9223372036854775807),(-9223372036854775808)));
select 'sum_overflow_pos', gpu_sum(x) from (select column1 x from (values (9223372036854775807),(1))); -- error: integer overflow
select 'sum_overflow_neg', gpu_sum(x) from (select column1 x from (values (-9223372036854775808),(-1))); -- error: integer overflow
select 'sum_overflow_two_max', gpu_sum(x) from (select column1 x from (values (9223372036854775807),(9223372036854775807))); -- error: integer overflow
select 'sum_overflow_after_nulls', gpu_sum(x) from (select column1 x from (values (NULL),(9223372036854775807),(NULL),(1))); -- error: integer overflow
select 'sum_order_max_1_m1', gpu_sum(x) = 9223372036854775807 and typeof(gpu_sum(x)) = 'integer' from (select column1 x from (values (9223372036854775807),(1),(-1)));
select 'sum_order_1_max_m1', gpu_sum(x) = 9223372036854775807 and typeof(gpu_sum(x)) = 'integer' from (select column1 x from (values (1),(9223372036854775807),(-1)));
select 'sum_order_min_m1_1', gpu_sum(x) = -9223372036854775808 and typeof(gpu_sum(x)) = 'integer' from (select column1 x from (values (-9223372036854775808),(-1),(1)));
select 'sum_order_wide_intermediate', gpu_sum(x) = -4 and typeof(gpu_sum(x)) = 'integer' from (select column1 x from (values (9223372036854775807),(9223372036854775807),(9223372036854775807),(9223372036854775807),(-9223372036854775808),(-9223372036854775808),(-9223372036854775808),(-9223372036854775808)));
select 'sum_order_wide_interleaved', gpu_sum(x) = 9223372036854775805 and typeof(gpu_sum(x)) = 'integer' from (select column1 x from (values (9223372036854775807),(9223372036854775807),(9223372036854775807),(-9223372036854775808),(-9223372036854775808)));
select 'sum_int_series', gpu_sum(value) = 500000500000 and typeof(gpu_sum(value)) = 'integer' from generate_series(1, 1000000);
select 'sum_int_series_alt_sign', gpu_sum(case when value % 2 then value else -value end) = -250000 and typeof(gpu_sum(case when value % 2 then value else -value end)) = 'integer' from generate_series(1, 500000);
select 'sum_int_series_overflow', gpu_sum(4611686018427387904) from generate_series(1, 100000); -- error: integer overflow
select 'sum_int_series_big_cancel', gpu_sum(case when value <= 50000 then 9223372036854775807 else -9223372036854775807 end) = 0 and typeof(gpu_sum(case when value <= 50000 then 9223372036854775807 else -9223372036854775807 end)) = 'integer' from generate_series(1, 100000);

-- text and blob classification (sqlite3_value_numeric_type, like sum())
select 'sum_text_int', gpu_sum(x) = 15 and typeof(gpu_sum(x)) = 'integer' from (select column1 x from (values ('12'),(3)));
select 'sum_text_real', gpu_sum(x) = 2.5 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values ('1.5'),(1)));
select 'sum_text_prefix', gpu_sum(x) = 13.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values ('12abc'),(1)));
select 'sum_text_nonnumeric', gpu_sum(x) = 1.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values ('abc'),(1)));
select 'sum_text_only_nonnumeric', gpu_sum(x) = 0.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values ('abc')));
select 'sum_text_int_overflow', gpu_sum(x) from (select column1 x from (values ('9223372036854775807'),(1))); -- error: integer overflow
select 'sum_blob_prefix', gpu_sum(x) = 13.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (x'3132'),(1)));
select 'sum_text_blob_vs_builtin', gpu_sum(x) = sum(x) and typeof(gpu_sum(x)) = typeof(sum(x)), gpu_sum(x), sum(x) from (select column1 x from (values ('7'),(' 8 '),('2.5e1'),(x'34'),('-3xyz'),(4)));
select 'sum_text_ints_vs_builtin', gpu_sum(x) = sum(x) and typeof(gpu_sum(x)) = 'integer' and typeof(sum(x)) = 'integer' from (select column1 x from (values ('1'),('22'),('-5'),(100)));

-- (2) any REAL: correctly rounded exact sum
select 'sum_real_basic', gpu_sum(x) = 3.5 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (1),(2.5)));
select 'sum_real_integral', gpu_sum(x) = 3.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (1.0),(2.0)));
select 'sum_real_single_mixed', gpu_sum(x) = 6.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (1),(2),(3.0)));
select 'sum_tenth_x10', gpu_sum(ieee754(3602879701896397, -55)) = 1.0 and typeof(gpu_sum(ieee754(3602879701896397, -55))) = 'real', printf('%!.17g', gpu_sum(ieee754(3602879701896397, -55))) from generate_series(1, 10);
select 'sum_tenth_x10_builtin_differs', sum(ieee754(3602879701896397, -55)) <> 1.0 from generate_series(1, 10);
select 'sum_cancel_big_first', gpu_sum(x) = 1.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (1e100),(1.0),(-1e100)));
select 'sum_cancel_big_pair', gpu_sum(x) = 1.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (1e100),(-1e100),(1.0)));
select 'sum_cancel_small_first', gpu_sum(x) = 1.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (1.0),(1e100),(-1e100)));
select 'sum_cancel_range', gpu_sum(x) = ieee754(1, -1074) and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (1e308),(ieee754(1, -1074)),(-1e308)));
select 'sum_int_plus_real_exact', gpu_sum(x) = 9007199254740994.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (9007199254740993),(1.0)));
select 'sum_int_plus_real_exact_rev', gpu_sum(x) = 9007199254740994.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (1.0),(9007199254740993)));
select 'sum_tie_to_even_down', gpu_sum(x) = 9007199254740992.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (9007199254740992),(1.0)));
select 'sum_tie_to_even_up', gpu_sum(x) = 9007199254740996.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (9007199254740994),(1.0)));
select 'sum_above_half_ulp', gpu_sum(x) = 9007199254740994.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (9007199254740992.0),(1.0),(ieee754(1, -100))));
select 'sum_int64_max_plus_real', gpu_sum(x) = ieee754(1, 63) and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (9223372036854775807),(1.0)));
select 'sum_ints_beyond_int64_with_real', gpu_sum(x) = ieee754(1, 64) and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (9223372036854775807),(9223372036854775807),(0.5)));
select 'sum_ints_cancel_with_real', gpu_sum(x) = 0.5 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (9223372036854775807),(9223372036854775807),(0.5),(-9223372036854775807),(-9223372036854775807)));
select 'sum_big_int_real_exact', gpu_sum(x) = 1.0 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (9223372036854775807),(ieee754(1, 63)),(-9223372036854775807),(ieee754(-1, 63)),(1.0)));
select 'sum_subnormal_pair', gpu_sum(x) = ieee754(2, -1074) and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (ieee754(1, -1074)),(ieee754(1, -1074))));
select 'sum_subnormal_x10', gpu_sum(ieee754(1, -1074)) = ieee754(10, -1074) and typeof(gpu_sum(ieee754(1, -1074))) = 'real' from generate_series(1, 10);
select 'sum_subnormal_survives', gpu_sum(x) = ieee754(1, -1074) and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (1.0),(ieee754(1, -1074)),(-1.0)));
select 'sum_subnormal_to_normal', gpu_sum(x) = ieee754(1, -1022) and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (ieee754(4503599627370495, -1074)),(ieee754(1, -1074))));
select 'sum_dblmax_exact', gpu_sum(x) = ieee754(9007199254740991, 971) and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (ieee754(9007199254740991, 971)),(ieee754(9007199254740991, 971)),(ieee754(-9007199254740991, 971))));
select 'sum_dblmax_overflow', gpu_sum(x) = 9e999 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (ieee754(9007199254740991, 971)),(ieee754(9007199254740991, 971))));
select 'sum_dblmax_overflow_neg', gpu_sum(x) = -9e999 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (ieee754(-9007199254740991, 971)),(ieee754(-9007199254740991, 971))));
select 'sum_dblmax_half_ulp_ties_up', gpu_sum(x) = 9e999 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (ieee754(9007199254740991, 971)),(ieee754(1, 970))));
select 'sum_dblmax_below_half_ulp', gpu_sum(x) = ieee754(9007199254740991, 971) and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (ieee754(9007199254740991, 971)),(ieee754(1, 969))));
select 'sum_inf_finite', gpu_sum(x) = 9e999 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (9e999),(1.0)));
select 'sum_inf_int', gpu_sum(x) = 9e999 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (5),(9e999)));
select 'sum_ninf_finite', gpu_sum(x) = -9e999 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (-1.0),(-9e999),(3)));
select 'sum_inf_inf', gpu_sum(x) = 9e999 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (9e999),(9e999)));
select 'sum_inf_ninf_null', gpu_sum(x) is null from (select column1 x from (values (9e999),(1.0),(-9e999)));
select 'sum_inf_with_big_ints', gpu_sum(x) = 9e999 and typeof(gpu_sum(x)) = 'real' from (select column1 x from (values (9223372036854775807),(9223372036854775807),(9e999)));

-- (3) empty, NULL, DISTINCT, FILTER, GROUP BY
select 'sum_empty', gpu_sum(x) is null from (select 1 x where 0);
select 'sum_all_null', gpu_sum(x) is null from (select column1 x from (values (NULL),(NULL)));
select 'sum_distinct_int', gpu_sum(distinct x) = 3 and typeof(gpu_sum(distinct x)) = 'integer' from (select column1 x from (values (1),(1),(2),(2),(NULL)));
select 'sum_distinct_real', gpu_sum(distinct x) = 1.5 and typeof(gpu_sum(distinct x)) = 'real' from (select column1 x from (values (1.5),(1.5),(1.5)));
select 'sum_distinct_vs_builtin', gpu_sum(distinct value % 7) = sum(distinct value % 7) and typeof(gpu_sum(distinct value % 7)) = typeof(sum(distinct value % 7)) from generate_series(1, 1000);
select 'sum_filter', gpu_sum(x) filter (where x > 1) = 5 and typeof(gpu_sum(x) filter (where x > 1)) = 'integer' from (select column1 x from (values (1),(2),(3)));
select 'sum_filter_empty', gpu_sum(x) filter (where x > 10) is null from (select column1 x from (values (1),(2),(3)));
select 'sum_group_by', count(*) = 7 and sum(ok) = 7 from (select gpu_sum(value) is sum(value) and typeof(gpu_sum(value)) = 'integer' ok from generate_series(1, 10000) group by value % 7);
select 'sum_group_by_null_group', count(*) = 2 and sum(ok) = 2 from (select gpu_sum(x) is sum(x) and typeof(gpu_sum(x)) = typeof(sum(x)) ok from (select column1 g, column2 x from (values (1,NULL),(1,NULL),(2,5))) group by g);
select 'sum_two_in_one_query', gpu_sum(value) = 5050 and typeof(gpu_sum(value)) = 'integer' and gpu_sum(value * 2) = 10100 and typeof(gpu_sum(value * 2)) = 'integer' and gpu_sum(-value) = -5050 and typeof(gpu_sum(-value)) = 'integer' from generate_series(1, 100);
select 'sum_in_having', count(*) = 1 from (select value % 3 g from generate_series(1, 9) group by g having gpu_sum(value) = 12 and typeof(gpu_sum(value)) = 'integer');
select 'sum_in_subquery_expr', (select gpu_sum(value) from generate_series(1, 4)) * 2 = 20 and (select typeof(gpu_sum(value)) from generate_series(1, 4)) = 'integer';
select 'sum_int_low_halves_carry', gpu_sum(4294967295) = 858993459000000 and typeof(gpu_sum(4294967295)) = 'integer' and gpu_sum(-4294967295) = -858993459000000 and typeof(gpu_sum(-4294967295)) = 'integer' from generate_series(1, 200000);
select 'sum_int_near_max_many', gpu_sum(46116860184273) = 9223372036854600000 and typeof(gpu_sum(46116860184273)) = 'integer' from generate_series(1, 200000);
