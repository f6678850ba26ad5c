"""PySpark names that neither a behaviour test calls nor Tidal refuses yet (557 at
the surface test's first run, most of them ``functions`` sqlframe builds but no test has run
against PySpark): the ratchet of ``test_api_surface``, which only ever shrinks."""

NOT_YET_SORTED = frozenset("""
Catalog.cacheTable Catalog.clearCache Catalog.createExternalTable Catalog.createTable
Catalog.currentCatalog Catalog.currentDatabase Catalog.databaseExists Catalog.dropGlobalTempView
Catalog.dropTempView Catalog.functionExists Catalog.getDatabase Catalog.getFunction
Catalog.getTable Catalog.isCached Catalog.listCatalogs Catalog.listColumns Catalog.listDatabases
Catalog.listFunctions Catalog.listTables Catalog.recoverPartitions Catalog.refreshByPath
Catalog.refreshTable Catalog.registerFunction Catalog.setCurrentCatalog
Catalog.setCurrentDatabase Catalog.tableExists Catalog.uncacheTable Column.asc
Column.asc_nulls_first Column.asc_nulls_last Column.between Column.cast Column.contains
Column.desc Column.desc_nulls_first Column.endswith Column.eqNullSafe Column.getField
Column.getItem Column.ilike Column.isNotNull Column.isNull Column.isin Column.like
Column.otherwise Column.rlike Column.startswith Column.substr Column.transform Column.when
DataFrame.alias DataFrame.cache DataFrame.checkpoint DataFrame.coalesce
DataFrame.createOrReplaceTempView DataFrame.createTempView DataFrame.drop
DataFrame.drop_duplicates DataFrame.explain DataFrame.filter DataFrame.freqItems
DataFrame.groupby DataFrame.head DataFrame.isLocal DataFrame.isStreaming
DataFrame.localCheckpoint DataFrame.persist DataFrame.printSchema DataFrame.registerTempTable
DataFrame.repartition DataFrame.repartitionByRange DataFrame.sampleBy DataFrame.sort
DataFrame.sparkSession DataFrame.to DataFrame.toArrow DataFrame.toDF DataFrame.toLocalIterator
DataFrame.unionAll DataFrame.unpersist DataFrame.withColumnRenamed DataFrame.write
DataFrameReader.format DataFrameReader.options DataFrameReader.table
DataFrameStatFunctions.freqItems DataFrameStatFunctions.sampleBy DataFrameWriter.csv
DataFrameWriter.format DataFrameWriter.mode DataFrameWriter.option DataFrameWriter.options
DataFrameWriter.parquet DataFrameWriter.partitionBy DataFrameWriter.save GroupedData.avg
GroupedData.max GroupedData.mean GroupedData.min SparkSession.Builder SparkSession.active
SparkSession.catalog SparkSession.getActiveSession SparkSession.range SparkSession.sql
SparkSession.table SparkSession.udf SparkSession.version Window.currentRow Window.orderBy
Window.rangeBetween Window.rowsBetween Window.unboundedFollowing Window.unboundedPreceding
WindowSpec.partitionBy WindowSpec.rangeBetween WindowSpec.rowsBetween functions.abs
functions.acos functions.acosh functions.add_months functions.aes_decrypt functions.aes_encrypt
functions.aggregate functions.any_value functions.approx_count_distinct
functions.approx_percentile functions.array functions.array_agg functions.array_append
functions.array_compact functions.array_contains functions.array_distinct functions.array_except
functions.array_insert functions.array_intersect functions.array_join functions.array_max
functions.array_min functions.array_position functions.array_prepend functions.array_remove
functions.array_repeat functions.array_size functions.array_sort functions.array_union
functions.arrays_overlap functions.arrays_zip functions.asc functions.asc_nulls_first
functions.asc_nulls_last functions.ascii functions.asin functions.asinh functions.assert_true
functions.atan functions.atan2 functions.atanh functions.base64 functions.bin functions.bit_and
functions.bit_count functions.bit_get functions.bit_length functions.bit_or functions.bit_xor
functions.bitmap_and_agg functions.bitmap_bit_position functions.bitmap_bucket_number
functions.bitmap_construct_agg functions.bitmap_count functions.bitmap_or_agg
functions.bitwise_not functions.bool_and functions.bool_or functions.broadcast functions.bround
functions.btrim functions.bucket functions.call_function functions.cardinality functions.cbrt
functions.ceil functions.ceiling functions.char functions.char_length functions.character_length
functions.coalesce functions.collate functions.collation functions.collect_list
functions.collect_set functions.column functions.concat functions.concat_ws functions.contains
functions.conv functions.convert_timezone functions.corr functions.cos functions.cosh
functions.cot functions.count_distinct functions.count_if functions.count_min_sketch
functions.covar_pop functions.covar_samp functions.crc32 functions.create_map functions.csc
functions.cume_dist functions.curdate functions.current_catalog functions.current_database
functions.current_date functions.current_schema functions.current_time
functions.current_timestamp functions.current_timezone functions.current_user functions.date_add
functions.date_diff functions.date_format functions.date_from_unix_date functions.date_part
functions.date_sub functions.date_trunc functions.dateadd functions.datediff functions.datepart
functions.day functions.dayname functions.dayofmonth functions.dayofweek functions.dayofyear
functions.days functions.decode functions.degrees functions.dense_rank
functions.desc_nulls_first functions.desc_nulls_last functions.e functions.element_at
functions.elt functions.encode functions.endswith functions.equal_null functions.every
functions.exists functions.exp functions.explode functions.explode_outer functions.expm1
functions.expr functions.extract functions.factorial functions.filter functions.find_in_set
functions.first_value functions.flatten functions.floor functions.forall functions.format_number
functions.format_string functions.from_csv functions.from_json functions.from_unixtime
functions.from_utc_timestamp functions.from_xml functions.get functions.get_json_object
functions.getbit functions.greatest functions.grouping functions.hash functions.hex
functions.histogram_numeric functions.hll_sketch_agg functions.hll_sketch_estimate
functions.hll_union functions.hll_union_agg functions.hour functions.hours functions.hypot
functions.ifnull functions.ilike functions.initcap functions.inline functions.inline_outer
functions.input_file_block_length functions.input_file_block_start functions.input_file_name
functions.instr functions.is_valid_utf8 functions.is_variant_null functions.isnan
functions.isnotnull functions.isnull functions.java_method functions.json_array_length
functions.json_object_keys functions.json_tuple functions.kurtosis functions.last_day
functions.last_value functions.lcase functions.least functions.left functions.length
functions.levenshtein functions.like functions.listagg functions.listagg_distinct functions.ln
functions.localtimestamp functions.locate functions.log functions.log10 functions.log1p
functions.log2 functions.lower functions.lpad functions.ltrim functions.make_date
functions.make_dt_interval functions.make_interval functions.make_time functions.make_timestamp
functions.make_timestamp_ltz functions.make_timestamp_ntz functions.make_valid_utf8
functions.make_ym_interval functions.map_concat functions.map_contains_key functions.map_entries
functions.map_filter functions.map_from_arrays functions.map_from_entries functions.map_keys
functions.map_values functions.map_zip_with functions.mask functions.max_by functions.md5
functions.median functions.min functions.min_by functions.minute functions.mode
functions.monotonically_increasing_id functions.month functions.monthname functions.months
functions.months_between functions.named_struct functions.nanvl functions.negate
functions.negative functions.next_day functions.now functions.nth_value functions.ntile
functions.nullif functions.nullifzero functions.nvl functions.nvl2 functions.octet_length
functions.overlay functions.parse_json functions.parse_url functions.percent_rank
functions.percentile functions.percentile_approx functions.pi functions.pmod
functions.posexplode functions.posexplode_outer functions.position functions.positive
functions.pow functions.power functions.printf functions.product functions.quarter
functions.quote functions.radians functions.raise_error functions.rand functions.randn
functions.randstr functions.rank functions.reduce functions.reflect functions.regexp
functions.regexp_count functions.regexp_extract functions.regexp_extract_all
functions.regexp_instr functions.regexp_like functions.regexp_replace functions.regexp_substr
functions.regr_avgx functions.regr_avgy functions.regr_count functions.regr_intercept
functions.regr_r2 functions.regr_slope functions.regr_sxx functions.regr_sxy functions.regr_syy
functions.repeat functions.replace functions.reverse functions.right functions.rint
functions.rlike functions.rpad functions.rtrim functions.schema_of_csv functions.schema_of_json
functions.schema_of_variant functions.schema_of_variant_agg functions.schema_of_xml
functions.sec functions.second functions.sentences functions.sequence functions.session_user
functions.session_window functions.sha functions.sha1 functions.sha2 functions.shiftleft
functions.shiftright functions.shiftrightunsigned functions.shuffle functions.sign
functions.signum functions.sin functions.sinh functions.size functions.skewness functions.slice
functions.some functions.sort_array functions.soundex functions.spark_partition_id
functions.split functions.split_part functions.sqrt functions.stack functions.startswith
functions.std functions.stddev functions.stddev_pop functions.stddev_samp functions.str_to_map
functions.string_agg functions.string_agg_distinct functions.struct functions.substr
functions.substring functions.substring_index functions.sum_distinct functions.tan
functions.tanh functions.time_diff functions.time_trunc functions.timestamp_add
functions.timestamp_diff functions.timestamp_micros functions.timestamp_millis
functions.timestamp_seconds functions.to_binary functions.to_char functions.to_csv
functions.to_date functions.to_json functions.to_number functions.to_time functions.to_timestamp
functions.to_timestamp_ltz functions.to_timestamp_ntz functions.to_unix_timestamp
functions.to_utc_timestamp functions.to_varchar functions.to_variant_object functions.to_xml
functions.transform functions.transform_keys functions.transform_values functions.translate
functions.trim functions.trunc functions.try_add functions.try_aes_decrypt functions.try_avg
functions.try_divide functions.try_element_at functions.try_make_interval
functions.try_make_timestamp functions.try_make_timestamp_ltz functions.try_make_timestamp_ntz
functions.try_mod functions.try_multiply functions.try_parse_json functions.try_parse_url
functions.try_reflect functions.try_subtract functions.try_sum functions.try_to_binary
functions.try_to_date functions.try_to_number functions.try_to_time functions.try_to_timestamp
functions.try_url_decode functions.try_validate_utf8 functions.try_variant_get functions.typeof
functions.ucase functions.unbase64 functions.unhex functions.uniform functions.unix_date
functions.unix_micros functions.unix_millis functions.unix_seconds functions.unix_timestamp
functions.url_decode functions.url_encode functions.user functions.validate_utf8
functions.var_pop functions.var_samp functions.variance functions.variant_get functions.version
functions.weekday functions.weekofyear functions.when functions.width_bucket functions.window
functions.window_time functions.xpath functions.xpath_boolean functions.xpath_double
functions.xpath_float functions.xpath_int functions.xpath_long functions.xpath_number
functions.xpath_short functions.xpath_string functions.xxhash64 functions.year functions.years
functions.zeroifnull functions.zip_with
""".split())
