-- gpu_total (like total(): REAL, 0.0 on empty, no overflow error) and
-- gpu_avg (REAL, NULL on empty, exact sum / count rounded once).

select 'total_empty', gpu_total(x) = 0.0 and typeof(gpu_total(x)) = 'real' from (select 1 x where 0);
select 'total_all_null', gpu_total(x) = 0.0 and typeof(gpu_total(x)) = 'real' from (select column1 x from (values (NULL),(NULL)));
select 'total_int_is_real', gpu_total(x) = 6.0 and typeof(gpu_total(x)) = 'real' from (select column1 x from (values (1),(2),(3)));
select 'total_int_overflow_no_error', gpu_total(x) = ieee754(1, 63) and typeof(gpu_total(x)) = 'real' from (select column1 x from (values (9223372036854775807),(1)));
select 'total_int_far_beyond_int64', gpu_total(9223372036854775807) = ieee754(1, 63) * 100000 and typeof(gpu_total(9223372036854775807)) = 'real' from generate_series(1, 100000);
select 'total_int_order', gpu_total(x) = ieee754(1, 63) and typeof(gpu_total(x)) = 'real' from (select column1 x from (values (9223372036854775807),(1),(-1)));
select 'total_tenth_x10', gpu_total(ieee754(3602879701896397, -55)) = 1.0 and typeof(gpu_total(ieee754(3602879701896397, -55))) = 'real' from generate_series(1, 10);
select 'total_cancel', gpu_total(x) = 1.0 and typeof(gpu_total(x)) = 'real' from (select column1 x from (values (1e100),(1.0),(-1e100)));
select 'total_int_plus_real_exact', gpu_total(x) = 9007199254740994.0 and typeof(gpu_total(x)) = 'real' from (select column1 x from (values (9007199254740993),(1.0)));
select 'total_int_rounding', gpu_total(x) = 9007199254740994.0 and typeof(gpu_total(x)) = 'real' from (select column1 x from (values (9007199254740993),(1)));
select 'total_int_rounding_even', gpu_total(x) = 9007199254740992.0 and typeof(gpu_total(x)) = 'real' from (select column1 x from (values (9007199254740992),(1)));
select 'total_subnormal', gpu_total(x) = ieee754(1, -1074) and typeof(gpu_total(x)) = 'real' from (select column1 x from (values (1.0),(ieee754(1, -1074)),(-1.0)));
select 'total_dblmax_overflow', gpu_total(x) = 9e999 and typeof(gpu_total(x)) = 'real' from (select column1 x from (values (ieee754(9007199254740991, 971)),(ieee754(9007199254740991, 971))));
select 'total_dblmax_exact', gpu_total(x) = ieee754(9007199254740991, 971) and typeof(gpu_total(x)) = 'real' from (select column1 x from (values (ieee754(9007199254740991, 971)),(ieee754(9007199254740991, 971)),(ieee754(-9007199254740991, 971))));
select 'total_inf', gpu_total(x) = 9e999 and typeof(gpu_total(x)) = 'real' from (select column1 x from (values (9e999),(1)));
select 'total_ninf', gpu_total(x) = -9e999 and typeof(gpu_total(x)) = 'real' from (select column1 x from (values (2.5),(-9e999)));
select 'total_text', gpu_total(x) = 15.5 and typeof(gpu_total(x)) = 'real' from (select column1 x from (values ('12'),('3.5abc')));
select 'total_distinct', gpu_total(distinct x) = 3.0 and typeof(gpu_total(distinct x)) = 'real' from (select column1 x from (values (1),(2),(2)));
select 'total_group_by', count(*) = 5 and sum(ok) = 5 from (select gpu_total(value) = total(value) and typeof(gpu_total(value)) = typeof(total(value)) ok from generate_series(1, 1000) group by value % 5);

select 'avg_empty', gpu_avg(x) is null from (select 1 x where 0);
select 'avg_all_null', gpu_avg(x) is null from (select column1 x from (values (NULL)));
select 'avg_int', gpu_avg(x) = 1.5 and typeof(gpu_avg(x)) = 'real' from (select column1 x from (values (1),(2)));
select 'avg_int_exact_division', gpu_avg(x) = 2.0 and typeof(gpu_avg(x)) = 'real' from (select column1 x from (values (1),(2),(3)));
select 'avg_nulls_not_counted', gpu_avg(x) = 2.0 and typeof(gpu_avg(x)) = 'real' from (select column1 x from (values (1),(NULL),(3),(NULL)));
select 'avg_seven_thirds', gpu_avg(x) = 7.0 / 3 and typeof(gpu_avg(x)) = 'real' from (select column1 x from (values (1),(2),(4)));
select 'avg_cancel_third', gpu_avg(x) = 1.0 / 3 and typeof(gpu_avg(x)) = 'real' from (select column1 x from (values (1e100),(1.0),(-1e100)));
select 'avg_big_ints_no_overflow', gpu_avg(x) = ieee754(1, 63) and typeof(gpu_avg(x)) = 'real' from (select column1 x from (values (9223372036854775807),(9223372036854775807)));
select 'avg_big_ints_exact', gpu_avg(x) = 3074457345618258602.0 and typeof(gpu_avg(x)) = 'real' from (select column1 x from (values (9223372036854775807),(1),(-1)));
select 'avg_tenth', gpu_avg(ieee754(3602879701896397, -55)) = ieee754(3602879701896397, -55) and typeof(gpu_avg(ieee754(3602879701896397, -55))) = 'real' from generate_series(1, 10);
select 'avg_subnormal_tie_even', gpu_avg(x) = ieee754(2, -1074) and typeof(gpu_avg(x)) = 'real' from (select column1 x from (values (ieee754(1, -1074)),(ieee754(2, -1074))));
select 'avg_subnormal_tie_even_down', gpu_avg(x) = ieee754(2, -1074) and typeof(gpu_avg(x)) = 'real' from (select column1 x from (values (ieee754(2, -1074)),(ieee754(3, -1074))));
select 'avg_dblmax_no_overflow', gpu_avg(x) = ieee754(9007199254740991, 971) and typeof(gpu_avg(x)) = 'real' from (select column1 x from (values (ieee754(9007199254740991, 971)),(ieee754(9007199254740991, 971))));
select 'avg_series', gpu_avg(value) = 500000.5 and typeof(gpu_avg(value)) = 'real' from generate_series(1, 1000000);
select 'avg_distinct', gpu_avg(distinct x) = 1.5 and typeof(gpu_avg(distinct x)) = 'real' from (select column1 x from (values (1),(2),(2),(2)));
select 'avg_text', gpu_avg(x) = 5.0 and typeof(gpu_avg(x)) = 'real' from (select column1 x from (values ('4'),('6')));
