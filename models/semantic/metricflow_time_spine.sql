{#- Daily time spine of the MetricFlow semantic layer (models/semantic):
    one row per UTC day from 2020-01-01 up to, not including, 2040-01-01.
    MetricFlow joins metrics to it for time-based grouping and gaps. -#}
with

days as (

    {{ dbt.date_spine(
        'day',
        "cast('2020-01-01' as date)",
        "cast('2040-01-01' as date)"
    ) }}

),

final as (

    select cast(date_day as date) as date_day
    from days

)

select * from final
