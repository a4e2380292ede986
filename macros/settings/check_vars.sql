{#- The project's vars checked before anything runs (the first on-run-start
    hook): a value of the wrong kind stops the build with every problem
    named, where it would otherwise be read silently (Jinja's `int` reads
    "seven" as 0: a re-retrieval window of 0 days) or reach SQL text as is
    (the numeric vars are written into the models' SQL). Values given with
    --vars or through the environment (LARA_RAW_PATH, LARA_BULK_RUN_SHARE)
    are checked alike. -#}

{#- Every var and its kind: [name, kind, minimum, maximum]. Kinds: `int`,
    `number` (numbers or numeric text), `boolean`, `text`, `identifier`
    (a schema name), `text_list`. -#}
{% macro lara_var_kinds() %}
    {{ return([
        ['lara_raw_path', 'text'],
        ['lara_raw_schema', 'identifier'],
        ['lara_k', 'int', 1],
        ['relevant_grade_min', 'int', 0],
        ['research_window_s', 'number', 0],
        ['lara_lookback_days', 'int', 0],
        ['lara_bulk_run_share', 'number', 0],
        ['research_similarity_min', 'number', 0, 1],
        ['orf_substitution_roles', 'text_list'],
        ['reretrieval_window_days', 'int', 0],
        ['missed_retrieval_reference_surface', 'text'],
        ['tier1_good_ndcg', 'number', 0, 1],
        ['rewrite_window_s', 'number', 0],
        ['rewrite_similarity_min', 'number', 0, 1],
        ['replay_turn_cap', 'int', 1],
        ['ctu_alpha', 'number'],
        ['ctu_beta', 'number'],
        ['ctu_gamma', 'number'],
        ['bridge_tau_low', 'number', 0, 1],
        ['bridge_tau_high', 'number', 0, 1],
        ['bridge_tie_decimals', 'int', 0],
        ['partition_ts_tolerance_days', 'int', 0],
        ['lara_full_test', 'boolean'],
        ['lara_expose_user_ids', 'boolean'],
        ['spark_column_comment_max_chars', 'int', 1],
    ]) }}
{% endmacro %}


{% macro lara_as_number(value, whole=false) %}
    {#- `value` as a number when it is one, or text of one (a whole number
        when `whole`); none otherwise (booleans are not numbers here). -#}
    {%- if value is boolean or value is none -%}
        {{ return(none) }}
    {%- elif value is number -%}
        {{ return(value if not whole or value == (value | int) else none) }}
    {%- elif value is string -%}
        {%- set text = value | trim -%}
        {%- if whole and modules.re.fullmatch('[+-]?[0-9]+', text) -%}
            {{ return(text | int) }}
        {%- elif not whole and modules.re.fullmatch('[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)?', text) -%}
            {{ return(text | float) }}
        {%- endif -%}
    {%- endif -%}
    {{ return(none) }}
{% endmacro %}


{% macro lara_var_problem(name, value, kind, minimum=none, maximum=none) %}
    {#- Why `value` is not a valid `kind` (lara_var_kinds), or '' when it is. -#}
    {%- if kind in ('int', 'number') -%}
        {%- set number = lara_as_number(value, whole=(kind == 'int')) -%}
        {%- set wanted = 'a whole number' if kind == 'int' else 'a number' -%}
        {%- if minimum is not none and maximum is not none -%}
            {%- set wanted = wanted ~ ' from ' ~ minimum ~ ' to ' ~ maximum -%}
        {%- elif minimum is not none -%}
            {%- set wanted = wanted ~ ' of at least ' ~ minimum -%}
        {%- endif -%}
        {%- if number is none
            or (minimum is not none and number < minimum)
            or (maximum is not none and number > maximum) -%}
            {{ return(wanted) }}
        {%- endif -%}
    {%- elif kind == 'boolean' -%}
        {%- if value is not boolean -%}{{ return('true or false') }}{%- endif -%}
    {%- elif kind == 'text' -%}
        {%- if value is not string or (value | trim) == '' -%}{{ return('non-empty text') }}{%- endif -%}
    {%- elif kind == 'identifier' -%}
        {%- if value is not string or not modules.re.fullmatch('[A-Za-z_][A-Za-z0-9_]*', value) -%}
            {{ return('a name of letters, digits and underscores') }}
        {%- endif -%}
    {%- elif kind == 'text_list' -%}
        {%- if value is string or value is not iterable or value is mapping -%}
            {{ return('a list of text values') }}
        {%- endif -%}
        {%- for item in value -%}
            {%- if item is not string -%}{{ return('a list of text values') }}{%- endif -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}


{% macro lara_check_vars() %}
    {#- Stops the build, naming every var whose value is not of its kind;
        renders no SQL. -#}
    {%- set problems = [] -%}
    {%- for spec in lara_var_kinds() -%}
        {%- set value = var(spec[0]) -%}
        {%- set problem = lara_var_problem(spec[0], value, spec[1], spec[2] if spec | length > 2 else none, spec[3] if spec | length > 3 else none) -%}
        {%- if problem -%}
            {%- do problems.append('var ' ~ spec[0] ~ ' must be ' ~ problem ~ ', got ' ~ (value | tojson)) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if problems -%}
        {{ exceptions.raise_compiler_error(
            'lara: ' ~ problems | join('; ')
            ~ " (dbt_project.yml documents each var; LARA_RAW_PATH and LARA_BULK_RUN_SHARE set two of them)"
        ) }}
    {%- endif -%}
{% endmacro %}
